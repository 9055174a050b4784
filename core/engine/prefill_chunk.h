#pragma once
// One sequence's share of a prefill step, as the capacity simulator schedules it and the step model
// prices it (core/serve/simulator.h StepShape, core/engine/step_model.h engine_prefill_step).
#include <cstdint>

namespace quantplan::engine {

// `tokens` prompt tokens at positions start_tokens + 1 .. start_tokens + tokens: a chunk after the
// `start_tokens` already in the sequence's KV cache (prefilled in earlier steps, or a prefix-cache
// hit), which it attends to as well.
struct PrefillChunk {
    std::int64_t start_tokens = 0;
    std::int64_t tokens = 0;
};

}  // namespace quantplan::engine
