#pragma once
// A discrete-event simulator of an engine's continuous batching (the capacity-planning issue's
// core, docs/capacity.md). In: requests (arrival time, prompt and output lengths), the engine's
// limits and a step-cost function; out: each request's TTFT, TPOT and end-to-end latency, and the
// run's counters. One priority of events (arrivals and step ends), a state only the handlers
// change, no wall clock, no globals, deterministic for its inputs (STYLE.md rule 22).
//
// The scheduler follows vLLM V1's: every step has a token budget of max_num_batched_tokens;
// running sequences that decode take one token each first, then prefills continue in chunks
// (chunked prefill mixed into decode steps), then waiting requests are admitted while fewer than
// max_num_seqs run and the KV cache has blocks for them. KV blocks of block_size tokens are
// allocated as sequences grow; when a decoding sequence needs a block and none is free, the most
// recently admitted running sequence is preempted by recompute (its blocks freed, back to the
// front of the queue, its prefill redone). Prefix caching: a request's shared prefix is skipped at
// admission once any request has prefilled it, and its full blocks are held once, in the cache,
// by every sequence that uses it (vLLM's block pool counts a cached block once, with a reference
// per sequence); the cache keeps them to the end of the run.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/engine/prefill_chunk.h"

namespace quantplan::serve {

// One request.
struct Request {
    double arrival_s = 0;
    std::int64_t input_tokens = 1;
    std::int64_t output_tokens = 1;
    // The first tokens of the prompt shared with every other request that has one (a system
    // prompt; prefix caching). Once one request has prefilled them, later admissions skip them
    // (all but the prompt's last token, which the engine always computes).
    std::int64_t shared_prefix_tokens = 0;
    // Disaggregated serving's decode side (core/serve/disagg.h): the prompt's KV cache arrives
    // computed (transferred from a prefill instance). Admission takes blocks for the prompt and
    // prefills nothing; the first decode step samples the first token. A preempted one recomputes
    // its prompt here, as a decode instance does.
    bool kv_ready = false;
    // Disaggregated serving's prefill side: the engine keeps the request's KV blocks this long after
    // it finishes (until the connector has sent them to a decode instance).
    double hold_kv_s = 0;
};

using engine::PrefillChunk;

// What one engine step computes, for the cost function.
struct StepShape {
    std::int64_t decode_sequences = 0;      // sequences generating one token this step
    std::int64_t decode_context_tokens = 0; // their KV-cache tokens, summed
    std::int64_t prefill_tokens = 0;        // prompt tokens prefilled this step (all chunks)
    std::int64_t prefill_sequences = 0;     // sequences whose prompt chunk runs this step
    std::vector<PrefillChunk> prefill_chunks;  // one per such sequence, in the order scheduled (their tokens sum to prefill_tokens)
    // Speculative decoding: the speculative tokens the decoding sequences verify this step, summed
    // (each also scores its last token: decode_sequences + speculative_tokens rows). 0 without.
    std::int64_t speculative_tokens = 0;
    // Forward passes the step runs on its batch, scheduled once: EngineLimits::multi_steps for a
    // decode-only step of vLLM V0's multi-step scheduling, else 1.
    std::int64_t steps = 1;
};

// Seconds one step of `shape` takes (the engine profile's mixed-step model, or a test's).
using StepCost = std::function<double(const StepShape&)>;

// The engine's limits.
struct EngineLimits {
    std::int64_t max_num_seqs = 256;
    std::int64_t max_num_batched_tokens = 8192;
    std::int64_t kv_cache_tokens = 1 << 20;   // the KV budget in tokens (admission's kv_cache_tokens)
    std::int64_t block_size_tokens = 16;
    // vLLM's hybrid allocator (sliding-window layers, docs/roofline.md): the pool holds
    // kv_cache_blocks blocks (0: kv_cache_tokens / block_size_tokens) shared by full_groups
    // full-attention groups, which take ceil(tokens / block) blocks each per request, and
    // sliding_groups sliding-window groups, which take at most ceil((sliding_window - 1 + new
    // tokens) / block) + 1 each (SlidingWindowSpec; vLLM frees the blocks behind the window).
    // The defaults (one group, no sliding layers) are every other model.
    std::int64_t kv_cache_blocks = 0;
    std::int64_t full_groups = 1;
    std::int64_t sliding_groups = 0;
    std::int64_t sliding_window = 0;
    // Mamba groups (Nemotron-H): one block each per request, its state, for the request's lifetime
    // (MambaSpec.max_memory_usage_bytes).
    std::int64_t state_groups = 0;
    // Prefix caching (a request's shared prefix is prefilled once). vLLM 0.11.0 turns it off for
    // hybrid Mamba / gated DeltaNet models (model_executor/models/config.py MambaModelConfig).
    bool prefix_caching = true;
    // The scheduler. false: vLLM V1's, decodes first and prefill chunks mixed into the same step.
    // true: a step prefills or decodes, never both, prefills first when any can run (vLLM V0
    // without chunked prefill, vllm/core/scheduler.py _schedule_default; SGLang's default without
    // --enable-mixed-chunk, scheduler.py get_next_batch_to_run: a new prefill batch before decode).
    bool prefill_first = false;
    // An admission prefills its whole prompt in one step, and waits until the budget and the free
    // blocks allow it (vLLM V0 without chunked prefill); false: prompts are chunked to the budget.
    bool whole_prompt_prefill = false;
    // SGLang's admission (schedule_policy.py PrefillAdder): a waiting request is admitted only when
    // its prompt plus its output (clipped at clip_max_new_tokens) fits in the free KV tokens less a
    // reservation for the running requests' remaining outputs (each clipped) times new_token_ratio,
    // and less what this step already admitted. The ratio starts at init_new_token_ratio, falls by
    // (init - min) / ratio_decay_steps each decode step to min_new_token_ratio, and returns to init
    // when a sequence is preempted (SGLang computes its new estimate from the retracted batch).
    bool reserve_future_tokens = false;
    // vLLM's scheduler (v1/core/sched/scheduler.py Scheduler.schedule): a prefill chunk is
    // min(what is left, the step's token budget) and is scheduled only when its blocks can all be
    // allocated. A running sequence's chunk (or decode token) preempts the latest-admitted running
    // sequences until it fits (itself last); a waiting request whose chunk does not fit waits, and
    // the queue behind it too; and a step that preempted admits no waiting request. false: a chunk
    // shrinks to the free blocks (an idealised scheduler).
    bool whole_chunks = false;
    // vLLM V0's multi-step scheduling (--num-scheduler-steps N; vllm/engine/llm_engine.py with
    // vllm/worker/multi_step_model_runner.py, 0.5.5 to 0.10.0): a decode-only batch is scheduled
    // once and runs N forward passes (StepShape::steps), each decoding sequence holding N - 1
    // lookahead slots beyond its next token (core/scheduler.py _get_num_lookahead_slots); a prefill
    // step runs once and streams its first token. The N tokens of a window reach the client
    // together at its end (one streamed chunk: one ITL gap), a sequence that ends inside the window
    // runs to its end, and a waiting request is admitted only between windows. 1: off.
    std::int64_t multi_steps = 1;
    double init_new_token_ratio = 0.7;           // SGLANG_INIT_NEW_TOKEN_RATIO
    double min_new_token_ratio = 0.7 * 0.14;     // x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
    std::int64_t ratio_decay_steps = 600;        // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
    std::int64_t clip_max_new_tokens = 4096;     // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
    // What a request spends outside the engine's steps, end to end: the HTTP server, tokenization,
    // the hop to the engine process (vLLM V1's engine-core IPC), detokenization and the stream back,
    // counted where the request goes in: the engine sees a request this long after the client sent
    // it, so TTFT and E2E rise by exactly this, and a closed-loop user's next request reaches the
    // engine this long after the last one finished. Arrival times in RequestResult are the client's.
    double frontend_latency_s = 0;
    // The frontend's serial share of a request: the API server handles one request at a time (one
    // Python process: HTTP parsing, the chat template, tokenization, the request's validation), so
    // requests sent together queue there (in the order frontend_rounds gives). It adds to the
    // frontend latency of a lone request.
    double frontend_serial_s = 0;
    // How that serial part orders the requests sent together. false: first come first served, the
    // k-th of a burst k x frontend_serial_s after the first. true: in rounds, as one asyncio event
    // loop runs them (vLLM's API server): every request already sent when a round starts is
    // rendered and tokenized in it, and none goes on to the engine before the round ends, so a
    // burst of N reaches the engine together, N x frontend_serial_s after it was sent; requests sent
    // during a round wait for the next. A closed loop's later requests (each sent when its user's
    // last one ends) pass first come first served. One request at a time is the same either way,
    // and so is the highest rate the frontend passes (1 / frontend_serial_s). capacity.cpp sets it
    // for vLLM only.
    bool frontend_rounds = false;
    // Speculative decoding (core/engine/speculative.h): each decoding sequence verifies
    // speculative_tokens more tokens a step (fewer when the step's token budget runs out, as vLLM V1
    // trims them), holds KV slots for them, and gains 1 + the tokens accepted, drawn from
    // `acceptance` (per-position rates p_i) by a generator seeded with spec_seed. Above
    // spec_disable_above_batch running sequences (0: never) the steps are plain.
    std::int64_t speculative_tokens = 0;
    std::vector<double> acceptance;
    std::uint64_t spec_seed = 0;
    std::int64_t spec_disable_above_batch = 0;
    std::int64_t spec_lookahead_slots = 0;  // KV slots held beyond the verified tokens (spec_lookahead_slots)
};

// One request's outcome.
struct RequestResult {
    double arrival_s = 0;
    double first_token_s = 0;   // end of the step that produced its first output token
    double admitted_s = -1;     // start of the step that first scheduled it (-1: never)
    double finish_s = 0;
    std::int64_t output_tokens = 0;
    std::int64_t preemptions = 0;
    double ttft_s() const { return first_token_s - arrival_s; }
    double e2e_s() const { return finish_s - arrival_s; }
    double queue_s() const { return admitted_s >= 0 ? admitted_s - arrival_s : 0.0; }  // waiting before its first step
    // Time per output token after the first; 0 for one-token outputs.
    double tpot_s() const { return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1) : 0.0; }
};

// The engine's state at one moment of a run (the timeline view): at the start of a step, or when
// the engine falls idle.
struct TimelinePoint {
    double t_s = 0;
    std::int64_t running = 0;      // sequences in the batch (the step's batch size)
    std::int64_t waiting = 0;      // requests arrived and not yet scheduled, or preempted (the queue)
    double kv_utilization = 0;     // share of KV blocks in use, the prefix cache's included
    std::int64_t preemptions = 0;  // preemptions so far
    // Speculative decoding: the tokens each decoding sequence gained in the step that starts here,
    // on average (1 + accepted), and the share of its speculative tokens accepted (0 without).
    double tokens_per_sequence = 0;
    double acceptance = 0;
};

// Gaps between consecutive output tokens of a request (ITL) over a whole run, in bounded memory: a
// histogram of log-spaced bins from 1 us to 1,000 s, 200 a decade, so a percentile read at a bin's
// geometric centre is within 0.6% of the exact one. Gaps outside the range land in the end bins.
struct GapHistogram {
    static constexpr double kLowest_s = 1e-6;
    static constexpr int kBinsPerDecade = 200;
    static constexpr int kDecades = 9;
    std::vector<std::int64_t> counts = std::vector<std::int64_t>(static_cast<std::size_t>(kBinsPerDecade * kDecades));
    std::int64_t total = 0;
    double sum_s = 0;
    void add(double gap_s, std::int64_t count = 1);
    // The q-quantile (0..1) of the gaps added, 0 when none were.
    double quantile(double q) const;
    double mean_s() const { return total > 0 ? sum_s / static_cast<double>(total) : 0.0; }
};

// A run.
struct SimulationResult {
    std::vector<RequestResult> requests;   // in the order given
    double end_s = 0;                      // when the last request finished
    std::int64_t steps = 0;
    std::int64_t preemptions = 0;
    double busy_s = 0;                     // time the engine was running steps
    double prefill_s = 0;                  // step time attributed to prefill tokens (by share of tokens)
    double mean_batch = 0;                 // time-weighted running sequences
    double mean_kv_utilization = 0;        // time-weighted share of KV blocks in use
    double mean_in_system = 0;             // time-weighted requests arrived and not finished, from the engine's queues
    std::int64_t prefix_hit_tokens = 0;    // prompt tokens whose prefill a prefix-cache hit skipped
    std::int64_t prefix_cache_blocks = 0;  // KV blocks the prefix cache holds once for every sequence
    // The engine's state over the run, thinned to at most 2 x timeline_points points (every k-th
    // step, k doubling whenever the list fills); empty when timeline_points is 0.
    std::vector<TimelinePoint> timeline;
    // Every gap between two streamed chunks of one request (a decode step, or longer when the request
    // sat out steps: a prefill-only step, a preemption's recompute; a chunk is one token, or a
    // speculative step's accepted tokens, or a multi-step window's tokens).
    GapHistogram itl;
    // Speculative decoding over the run: verify steps' speculative tokens and those accepted, and
    // the tokens decoding sequences gained per forward pass (the mean acceptance length realised;
    // 1 without speculation, multi-step windows included).
    std::int64_t speculative_tokens = 0;
    std::int64_t accepted_tokens = 0;
    double tokens_per_decode_step = 0;
};

// Simulates `requests` (sorted by arrival) on an engine with `limits` and `cost`. Throws
// Error("--serve") for a request that can never be admitted (prompt + output beyond the KV cache)
// or limits that are not positive. Bounded: at most `max_steps` steps.
// With `closed_loop_users` > 0 the arrival times are ignored: that many users each send the next
// request when their last one finishes (the first ones at time 0), as a benchmark client with a
// concurrency cap does. `timeline_points` bounds the timeline kept (0: none), so memory stays
// bounded for long runs.
SimulationResult simulate(const std::vector<Request>& requests, const EngineLimits& limits, const StepCost& cost,
                          std::int64_t max_steps = 50'000'000, std::int64_t closed_loop_users = 0, std::size_t timeline_points = 0);

// Open-loop Poisson arrivals at `rate_per_s` of `count` requests with fixed lengths, from `seed`.
std::vector<Request> poisson_requests(std::int64_t count, double rate_per_s, std::int64_t input_tokens, std::int64_t output_tokens,
                                      std::uint64_t seed);

// Little's law over a run: the mean number of requests in the system as the engine's queues held
// them (SimulationResult::mean_in_system) beside throughput x mean latency from the requests'
// timestamps, over the window from the first arrival to the last finish.
struct LittlesLaw {
    double mean_in_system = 0;
    double throughput_times_latency = 0;
};
LittlesLaw littles_law(const SimulationResult& r);

}  // namespace quantplan::serve
