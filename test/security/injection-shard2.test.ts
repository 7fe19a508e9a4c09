// The injection corpus (./injection-corpus.ts), shard 2 of 2: its own file, so two workers share the corpus.
import { injectionSuite } from "./injection-corpus";

injectionSuite(1, 2);
