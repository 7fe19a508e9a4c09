import { readTemplate } from "../templates";
import { SECRET_KEYS } from "./objects";

/**
 * The text a pod's `python3 -c` runs for one of the fleet's checks (templates/kubernetes/<name>.py):
 * the shared calls (engine-version.py: the engine's weight version, the API key on every call) in
 * front of it, and in front of those the name of the variable that holds the key in the pod.
 */
export function pythonCheck(name: string): string {
  return [
    `KEY_ENV = ${JSON.stringify(SECRET_KEYS.apiKey)}`,
    readTemplate("kubernetes/engine-version.py"),
    readTemplate(`kubernetes/${name}.py`),
  ].join("\n");
}
