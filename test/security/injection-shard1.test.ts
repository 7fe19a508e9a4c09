// The injection corpus (./injection-corpus.ts), shard 1 of 2: its own file, so two workers share the corpus.
import { injectionSuite } from "./injection-corpus";

injectionSuite(0, 2);
