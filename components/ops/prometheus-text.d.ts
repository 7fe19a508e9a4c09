/** Types for parse-prometheus-text-format 1.1 (it ships none): one family per metric name. */
declare module "parse-prometheus-text-format" {
  interface Sample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface Family {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: Sample[];
  }
  function parsePrometheusTextFormat(text: string): Family[];
  export = parsePrometheusTextFormat;
}
