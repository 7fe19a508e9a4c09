// The injection corpus (./injection-corpus.ts), shard 2 of 4: its own file, so vitest's workers share the corpus.
import { injectionSuite } from "./injection-corpus";

injectionSuite(1, 4);
