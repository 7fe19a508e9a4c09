/**
 * Vendors the CRDs the test control plane installs and the program does not render itself into
 * test/fixtures/upstream/control-plane-crds/ (a folder validate.ts does not read), descriptions
 * dropped like the other vendored CRDs. Run by hand when a version moves:
 *
 *   npx tsx test/kubernetes/control-plane/vendor-crds.ts
 *
 * - podmonitors.json: prometheus-operator v0.93.0, from its module source on the Go module proxy
 *   (example/prometheus-operator-crd/), downloaded into a temporary GOPATH deleted afterwards.
 * - disaggregatedsets.json: LWS's DisaggregatedSet CRD, vendored by `npm run sync-upstream` with the
 *   other CRDs from the maintainers' upstream folder (no registry serves sigs.k8s.io/lws).
 * - disaggregatedsetrolescalers.json is written by hand (see the README): no source has it here.
 *
 * The control plane takes its CRDs from these vendored files only, none from the shared folder beside
 * the clone (from there it takes only the LWS controller, and up.sh says so loudly when it is missing).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { withoutDescriptions } from "../../../bin/sync-upstream";

const OUT = path.resolve(__dirname, "..", "..", "fixtures", "upstream", "control-plane-crds");
const PROMETHEUS_OPERATOR = "v0.93.0";

function write(name: string, crd: unknown): void {
  fs.writeFileSync(path.join(OUT, name), JSON.stringify(withoutDescriptions(crd), null, 1) + "\n");
  console.log(`wrote test/fixtures/upstream/control-plane-crds/${name}`);
}

const gopath = fs.mkdtempSync(path.join(os.tmpdir(), "vendor-crds-"));
try {
  const env = { ...process.env, GOPATH: gopath, GOMODCACHE: path.join(gopath, "mod"), GOFLAGS: "-modcacherw" };
  const info = JSON.parse(
    execFileSync(
      "go",
      ["mod", "download", "-json", `github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR}`],
      {
        env,
        cwd: gopath,
        encoding: "utf8",
      },
    ),
  );
  const file = path.join(info.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_podmonitors.yaml");
  write("podmonitors.json", YAML.parse(fs.readFileSync(file, "utf8")));
} finally {
  fs.rmSync(gopath, { recursive: true, force: true });
}
