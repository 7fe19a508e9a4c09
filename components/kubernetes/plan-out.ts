import type { PlanOutFile } from "../backend";
import type { StackPlan } from "../plan/stack-plan";
import { islandK8sObjects, renderK8sStack } from "./fleet-objects";
import type { K8sObject } from "./objects";
import { yamlPackage } from "../lazy-packages";

/** `<kind>-<name>.yaml`, one object per file, as `kubectl apply -f DIR` reads them. */
const objectFile = (o: K8sObject) => `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`;
const objectYaml = (o: K8sObject) =>
  yamlPackage().stringify(o, { aliasDuplicateObjects: false, blockQuote: "literal", lineWidth: 0 });

/**
 * `plan --out` on Kubernetes: the namespace (when the fleet creates it) at the top, then every
 * object of each service's islands as YAML, each island in its folder. No credentials are
 * configured: `pulumi up` adds the Secret and its references when hfToken or apiKey is set.
 */
export function kubernetesPlanOut(stack: StackPlan): PlanOutFile[] {
  const rendered = renderK8sStack(stack, []);
  const ns = rendered.namespaceObject;
  return [
    ...(ns ? [{ path: objectFile(ns), text: objectYaml(ns) }] : []),
    ...rendered.services.flatMap((fleet, k) =>
      fleet.islands.flatMap((island) => {
        const dir = stack.services[k].islands[island.island].name;
        return islandK8sObjects(island).map((o) => ({ path: `${dir}/${objectFile(o)}`, text: objectYaml(o) }));
      }),
    ),
  ];
}
