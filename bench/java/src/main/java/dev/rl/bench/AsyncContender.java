package dev.rl.bench;

import java.util.concurrent.CompletionStage;

/** A contender that can also decide without blocking its caller (for {@link InFlightPhase}). */
interface AsyncContender extends Contender {
  /** One decision on key, completed on the library's own thread; true when admitted. */
  CompletionStage<Boolean> decideAsync(String key);
}
