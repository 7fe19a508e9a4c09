import { loadConfigFile, parseOverrides } from "./components/config";
import { buildPlan } from "./components/plan/plan";
import { renderIslandJob } from "./components/render/island-job";
const [file, stack, ...rest] = process.argv.slice(2);
const { overrides } = parseOverrides(rest);
const plan = buildPlan(loadConfigFile(file, overrides), stack);
const j = renderIslandJob(plan, plan.islands[0]);
require("fs").writeFileSync("/tmp/create.sh", j.stdin);
require("fs").writeFileSync("/tmp/delete.sh", j.delete);
