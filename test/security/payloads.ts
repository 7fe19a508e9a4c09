/**
 * The injection corpus: hostile strings for every string field that reaches a SLURM script or a
 * Kubernetes manifest (test/security/injection-corpus.ts places each in each field).
 *
 * Every payload but the bare `--help` carries a canary action that creates the file `canary` names
 * if any shell, kubelet or template ever executes or splices the text; the test gives each
 * placement its own canary path, so a created canary names it. Payloads are functions of that path
 * because some of them must have an exact length once it is filled in.
 */
export interface Payload {
  /** Short stable id, used in test names and in the known-bug table. */
  id: string;
  /** What the payload attacks. */
  about: string;
  text: (canary: string) => string;
}

/** A string of exactly `n` characters made of `unit` repeated, then cut (an injection in every unit). */
const exactly = (n: number, unit: string) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const p = (id: string, about: string, text: (c: string) => string): Payload => ({ id, about, text });

export const PAYLOADS: Payload[] = [
  // Command substitution and its relatives.
  p("cmdsub", "$(...) command substitution", (c) => `$(touch ${c})`),
  p("cmdsub-inside", "$(...) inside a word", (c) => `org/model-$(touch ${c})-v1`),
  p("backticks", "backtick command substitution", (c) => `\`touch ${c}\``),
  p("procsub-in", "<(...) process substitution", (c) => `<(touch ${c})`),
  p("procsub-out", ">(...) process substitution", (c) => `>(touch ${c})`),
  p("arith", "$((...)) arithmetic with a command inside", (c) => `$(( $(touch ${c}) 1 + 1 ))`),
  p("param-default", "${VAR:=$(...)} parameter expansion running a command", (c) => `\${X:=$(touch ${c})}`),
  p("param-plain", "$VAR and ${VAR} expansions", (c) => `$HOME-\${PATH}-$1-$$-$?-$!-$(touch ${c})`),
  p("ansi-c", "$'...' ANSI-C quoting that decodes to a quote", (c) => `$'\\x27; touch ${c}; \\x27'`),
  // Quotes, balanced and not.
  p("sq-break", "closes a single-quoted string", (c) => `'; touch ${c}; echo '`),
  p("dq-break", "closes a double-quoted string", (c) => `"; touch ${c}; echo "`),
  p("sq-unbalanced", "one single quote", (c) => `it's $(touch ${c})`),
  p("dq-unbalanced", "one double quote", (c) => `say "$(touch ${c})`),
  p("quote-mix", "both quotes, escaped quotes and an exclamation mark", (c) => `a'b"c\\'d\\"e!f \`touch ${c}\` '"'"'`),
  p("history", "history expansion characters next to a quote", (c) => `it's !! !-1 !$ $(touch ${c})`),
  // Control operators.
  p("newline", "a newline, then a command", (c) => `x\ntouch ${c}`),
  p("newline-quoted", "a quote, a newline and a command on the next line", (c) => `x'\ntouch ${c}\n'`),
  p("semicolon", "; then a command", (c) => `x; touch ${c}`),
  p("and", "&& then a command", (c) => `true && touch ${c}`),
  p("or", "|| then a command", (c) => `false || touch ${c}`),
  p("pipe", "| into a command", (c) => `x | touch ${c}`),
  p("background", "& then a command", (c) => `x & touch ${c}`),
  p("redirect-out", "> and >> redirections onto the canary", (c) => `x > ${c} >> ${c}`),
  p("redirect-in", "< redirection and a here-string", (c) => `x < /dev/null <<< $(touch ${c})`),
  p("subshell", "(...) and {...;} groupings", (c) => `(touch ${c}) { touch ${c}; }`),
  // Expansions that change a word without running anything (caught by the byte-for-byte checks).
  p("glob-star", "* and ** globs", (c) => `* /* **/ $(touch ${c})`),
  p("glob-question", "? glob", (c) => `?? /??? $(touch ${c})`),
  p("glob-bracket", "[...] glob", (c) => `[a-z]* /[e]tc $(touch ${c})`),
  p("brace", "brace expansion forming a command", (c) => `x;{touch,${c}} {a,b}{1..3}`),
  p("tilde", "tilde expansion", (c) => `~ ~root/x ~+ ~- $(touch ${c})`),
  // Heredoc terminators the rendered scripts use, on lines of their own.
  p(
    "heredoc-script",
    "FLEET_SCRIPT on its own line (the create script's heredoc)",
    (c) => `x\nFLEET_SCRIPT\ntouch ${c}\nFLEET_SCRIPT_1\ntouch ${c}`,
  ),
  p(
    "heredoc-launch",
    "FLEET_LAUNCH / FLEET_CLEANUP on their own lines (the sbatch heredocs)",
    (c) => `x\nFLEET_LAUNCH\ntouch ${c}\nFLEET_CLEANUP\ntouch ${c}\n`,
  ),
  p("heredoc-eof", "EOF and tab-indented terminators", (c) => `\nEOF\n\tFLEET_LAUNCH\n FLEET_SCRIPT \ntouch ${c}\nEOF`),
  // Comments and backslashes.
  p("comment", "# starting a comment, then a newline and a command", (c) => `x #comment\ntouch ${c} #`),
  p("backslash-end", "a trailing backslash", (c) => `$(touch ${c})\\`),
  p("backslash-quote", "backslash before quotes", (c) => `\\'; touch ${c}; \\"; touch ${c}; #`),
  p("backslash-newline", "backslash-newline line continuation", (c) => `x\\\ntouch ${c}`),
  // Whitespace and Unicode.
  p("cr", "carriage returns (CRLF line ends)", (c) => `x\r\ntouch ${c}\r`),
  p("tab", "tabs", (c) => `a\tb\t$(touch ${c})\t`),
  p("spaces", "leading, trailing and repeated spaces", (c) => `  a   b  $(touch ${c})  `),
  p(
    "unicode-quotes",
    "Unicode quotes and dashes that look like shell syntax",
    (c) => `‘x’ “y” – — ＄(touch ${c}) $(touch ${c})`,
  ),
  p(
    "unicode-space",
    "no-break space, line and paragraph separators",
    (c) => `a\u00a0b\u2028c\u2029d\u3000$(touch ${c})`,
  ),
  p(
    "unicode-mixed",
    "non-Latin text, emoji, bidi override and zero-width characters",
    (c) => `модель-模型-🚀\u202e\u200b\ufeff$(touch ${c})`,
  ),
  p(
    "control-chars",
    "ANSI escapes, bell and other control characters",
    (c) => `\x1b[31mred\x1b[0m\x07\x01\x0b\x0c$(touch ${c})`,
  ),
  // Lengths.
  p(
    "long-10k",
    "a 10,000+ character string full of injections",
    (c) => `${exactly(10_240, `'"$(touch ${c})\`touch ${c}\`;touch ${c}\n`)}`,
  ),
  p("long-4096", "exactly 4096 characters, the longest a plain text field takes", (c) =>
    exactly(4096, `;touch ${c};'"\\`),
  ),
  // Structured formats the renderers produce.
  p(
    "yaml",
    "YAML-significant text: a mapping, flow collections, anchors, tags, a document marker",
    (c) => `key: value\n- item\n{a: [b, "c"]} &a *a !!binary |\n---\n$(touch ${c})`,
  ),
  p("json", "JSON-breaking text: closes a string and an object", (c) => `"},{"id":"evil","x":"\\"$(touch ${c})`),
  p("null-byte", "a NUL byte (no shell can carry one: must be rejected)", (c) => `a\u0000$(touch ${c})`),
  // Kubernetes $(VAR) expansion.
  p(
    "k8s-secret-ref",
    "kubelet $(VAR) references to the fleet's secrets",
    (c) => `$(HF_TOKEN)-$(VLLM_API_KEY)-$(touch ${c})`,
  ),
  p(
    "k8s-env-ref",
    "kubelet $(VAR) references to pod env and an escaped $$",
    (c) => `$(POD_IP)$$(HF_TOKEN)$$$(VLLM_API_KEY)$(touch ${c})`,
  ),
  // Template and tool syntax.
  p(
    "mustache",
    "mustache tags, triple braces and a delimiter change",
    (c) => `{{script}}{{{launchBody}}}{{#probes}}x{{/probes}}{{=<% %>=}}<%jobName%>$(touch ${c})`,
  ),
  p("dash-help", "an option where a value is expected", () => "--help"),
  p("dash-option", "an option with a value that would run a command", (c) => `--wrap=touch ${c}`),
  p("dash-single", "a short option cluster", (c) => `-ce touch ${c}`),
  p("sbatch-patterns", "sbatch filename patterns", (c) => `%j-%x-%u-%N-%A-%a-%%-$(touch ${c})`),
  p(
    "sbatch-directive",
    "an #SBATCH directive and an extra sbatch option",
    (c) => `x --export=ALL,X=$(touch ${c})\n#SBATCH --wrap="touch ${c}"`,
  ),
  p("sbatch-hetjob", "the word sbatch reads as a heterogeneous-job separator", (c) => `x-hetjob-packjob-$(touch ${c})`),
  p("printf-format", "printf format directives", (c) => `%s%n%d%%\\n%b-$(touch ${c})`),
  p(
    "equals-colon-comma",
    "=, : and , which PATH, bind lists and --flag=value read specially",
    (c) => `a=b:c,d=$(touch ${c}):/tmp,x`,
  ),
];
