#pragma once
// Capacity planning on the simulator (docs/capacity.md): traffic from the command line's specs,
// the engine profile's step model as the simulator's mixed-step cost, a run's latency percentiles,
// goodput and SLO attainment, the highest rate one replica sustains within the SLOs, replicas and
// cost per million tokens.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/engine/speculative.h"
#include "core/engine/step_model.h"
#include "core/serve/simulator.h"

namespace quantplan::serve {

// A length distribution: `N`, `uniform:A:B`, `normal:MEAN:SD`, `lognormal:MEDIAN:SIGMA` or
// `file:PATH` (one length a line, or a JSONL/CSV whose lines hold one integer each, first field).
struct LengthSpec {
    enum class Kind { Fixed, Uniform, Normal, Lognormal, File };
    Kind kind = Kind::Fixed;
    double a = 1;   // N, A, MEAN or MEDIAN
    double b = 0;   // B, SD or SIGMA
    std::vector<std::int64_t> values;  // Kind::File
    std::string text;                  // as given
};

// Parses SPEC. Throws Error(option) for a malformed spec, a value below 1 token (or a negative
// spread), an unreadable or empty file, or lengths beyond 2^24 tokens.
LengthSpec parse_length_spec(const std::string& spec, const std::string& option);

// One draw, at least 1 token, at most 2^24.
std::int64_t draw_length(const LengthSpec& spec, std::mt19937_64& rng);

// The largest length the spec can give (for the max_model_len check): exact for fixed, uniform
// and files; the 99.9th percentile for normal and lognormal (the draws are clamped there).
std::int64_t max_length(const LengthSpec& spec);

// How open-loop requests arrive: `poisson`, `gamma:CV` (gaps gamma-distributed with that
// coefficient of variation: 1 is Poisson, above 1 burstier) or `burst` (all at time 0).
struct Arrival {
    enum class Kind { Poisson, Gamma, Burst };
    Kind kind = Kind::Poisson;
    double cv = 1;
    std::string text = "poisson";
};
Arrival parse_arrival(const std::string& spec, const std::string& option);

// A trace: one request a line, `arrival_s,input_tokens,output_tokens` (CSV or whitespace; a header
// line is skipped) or a JSONL object with `arrival_s` or `timestamp`, `input_tokens` or
// `input_length`, `output_tokens` or `output_length`. Sorted by arrival, times made relative to the
// first. Throws Error(option) naming the line for a malformed or empty trace.
std::vector<Request> read_trace(const std::string& path, const std::string& option);
// The same from a trace's text (`path` names it in errors).
std::vector<Request> parse_trace(const std::string& text, const std::string& path, const std::string& option);

// A length file's text (`file:PATH`): the first integer of each line, a header and `#` comments skipped.
std::vector<std::int64_t> parse_lengths(const std::string& text, const std::string& path, const std::string& option);


// The traffic of a run.
struct Traffic {
    std::optional<double> rate_per_s;           // open loop
    std::optional<std::int64_t> concurrency;    // closed loop: N users
    std::int64_t requests = 1000;
    LengthSpec input = {LengthSpec::Kind::Fixed, 2000, 0, {}, "2000"};
    LengthSpec output = {LengthSpec::Kind::Fixed, 500, 0, {}, "500"};
    Arrival arrival;
    std::int64_t prefix_tokens = 0;             // a shared prefix of every prompt (prefix caching)
    std::vector<Request> trace;                 // when not empty: these requests, not drawn ones
    std::uint64_t seed = 1;
    // Every request arrives with its prompt's KV computed (Request::kv_ready): a decode pool's view
    // of the traffic (core/serve/disagg.h), used to size that pool on its own.
    bool kv_ready = false;
};

// The requests of `traffic` at `rate_per_s` (0: all at time 0, for a closed loop or all at once).
// Lengths and arrivals draw from separate streams of the seed, so the same seed gives the same
// prompts at every rate. A trace is replayed as recorded, its times scaled to `rate_per_s` when
// that differs from its own mean rate (0 keeps its times).
std::vector<Request> make_requests(const Traffic& traffic, double rate_per_s);

// A trace's own mean arrival rate (requests / span), 0 for a single request or one instant.
double trace_rate(const std::vector<Request>& trace);

// A latency target on one quantity at one percentile (`S`, `S@p50`, `S@p90`, `S@p99`).
struct SloTarget {
    double seconds = 0;
    double quantile = 0.99;
};
std::optional<SloTarget> parse_slo(const std::optional<std::string>& text, const std::string& option);

struct Slo {
    std::optional<SloTarget> ttft, tpot, e2e;
    bool any() const { return ttft || tpot || e2e; }
};

// The earliest each first token of prompts sent together can come, ascending: the k-th needs at
// least the block linears of k prompts (2 x the active block parameters a token; attention and the
// LM head left out), the k shortest at best, at the `tp` GPUs' peak matmul rate for the scheme. A
// floor any schedule meets: a published TTFT below it says those prompts did not all run their
// prefill (a warm prefix cache, or another setup). Empty when the GPU has no peak for the scheme.
std::vector<double> first_token_floors_s(std::vector<double> prompt_tokens, const ModelConfig& model, const SchemeCosts& costs,
                                         const GpuProfile& gpu, std::int64_t tp);

// What the simulator needs from a scheme on an engine: limits (the per-request frontend latency
// among them, EngineLimits::frontend_latency_s) and the mixed-step cost.
struct EnginePricing {
    EngineLimits limits;
    StepCost cost;
    double fastest_step_s = 0;   // a decode step at batch 1 and context 1: no SLO can be below it
};

// Speculative decoding in the simulator: the steps verify K tokens per sequence, the draft's
// forwards are priced with them, and each step's accepted tokens are drawn from the acceptance.
struct SpecPricing {
    engine::SpecRequest request;
    engine::Acceptance acceptance;
    engine::DraftCost draft;
    engine::SpecTerms terms;
    std::optional<SchemeCosts> draft_costs;     // draft:MODEL
    std::optional<ModelConfig> draft_model;
    std::int64_t disable_above_batch = 0;
    std::uint64_t seed = 0;
};

// Builds the pricing of `costs` (a scheme) on `gpu` with `setup`, the workload's engine settings
// and the admission's KV budget (with `spec`, the admission of spec_workload). The cost holds
// copies of everything it reads.
EnginePricing engine_pricing(const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu, const engine::EngineSetup& setup,
                             const Workload& w, const Admission& admission, const SpecPricing* spec = nullptr);

struct Percentiles {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
    double at(double q) const { return q <= 0.5 ? p50 : q <= 0.9 ? p90 : p99; }
};
Percentiles percentiles(std::vector<double> values);

// A run's figures, as a benchmark client reports them.
struct ServeStats {
    // TTFT, TPOT and E2E per request; ITL per token gap (every gap of every request: a decode
    // step, or longer where the request sat out prefill-only steps or a recompute).
    Percentiles ttft_s, tpot_s, e2e_s, itl_s;
    Percentiles queue_s;                // arrival to the first step that schedules it
    double output_tokens_per_s = 0, input_tokens_per_s = 0, requests_per_s = 0;
    double goodput_requests_per_s = 0;  // requests meeting every SLO per second
    double slo_attainment = 1;          // their share
    std::int64_t preemptions = 0;
    std::int64_t prefix_hit_tokens = 0;
    double kv_utilization_mean = 0, mean_batch = 0;
    double span_s = 0, busy_s = 0, prefill_s = 0;  // GPU time: prefill, decode = busy - prefill, idle = span - busy
    bool meets_slo = true;              // every target's percentile within it
    bool stable = true;                 // the queue does not grow: the last quarter's E2E within 25% of the second's
    // An open-loop run whose queue keeps growing (not stable): its latencies depend on how long it
    // ran, so they are not reported; `completed_requests_per_s` (completions while requests still
    // arrived) of `offered_requests_per_s` is the answer.
    bool overloaded = false;
    double offered_requests_per_s = 0;    // the open-loop arrival rate (0: closed loop or all at once)
    double completed_requests_per_s = 0;  // completions up to the last arrival, per second of arrivals
    std::vector<TimelinePoint> timeline;  // batch, queue, KV use and preemptions over the run (when asked for)
    // Speculative decoding (EngineLimits::speculative_tokens > 0): what the run realised.
    bool speculative = false;
    double spec_tokens_per_step = 0;      // tokens a decoding sequence gained per step
    double spec_acceptance_rate = 0;      // accepted / speculative tokens
    std::int64_t spec_tokens = 0, spec_accepted = 0;
};

ServeStats summarize(const SimulationResult& sim, const std::vector<Request>& requests, const Slo& slo);

// Runs `traffic` (at `rate_per_s` when set, else the traffic's own rate or concurrency), keeping
// a timeline of at most 2 x `timeline_points` points (0: none).
ServeStats run_traffic(const Traffic& traffic, const EnginePricing& pricing, const Slo& slo, std::optional<double> rate_per_s = std::nullopt,
                       std::size_t timeline_points = 0);

// One point of a latency-against-rate curve: a Poisson run at `rate_per_s`.
struct RatePoint {
    double rate_per_s = 0;
    Percentiles ttft_s, tpot_s, e2e_s;
    double goodput_requests_per_s = 0;
    bool meets_slo = true, stable = true;
};

// The same traffic at each of `rates` (Poisson, the search's request count: at least 1,000, at
// most 20,000), for the latency-against-rate charts.
std::vector<RatePoint> rate_sweep(const Traffic& traffic, const EnginePricing& pricing, const Slo& slo, const std::vector<double>& rates);

// What stops a replica from carrying more: the SLO that fails first above its highest rate, or,
// when the SLOs still hold there and the queue grows, the resource that runs out (the KV cache, the
// running-sequence limit, or the GPU's compute and bandwidth).
struct Binding {
    std::string constraint;    // "ttft_slo", "tpot_slo", "e2e_slo", "kv_capacity", "max_num_seqs", "compute"
    std::string detail;        // one line for a person, e.g. "KV capacity: the cache holds 2.1 of the traffic's sequences"
    double sequences_in_cache = 0;  // KV tokens / the traffic's mean prompt + output (every constraint)
};

// The highest rate and what binds there.
struct RateSearch {
    std::optional<double> rate;
    Binding binding;
};
RateSearch sustained_rate_search(const Traffic& traffic, const EnginePricing& pricing, const Slo& slo);

// The highest Poisson rate one replica sustains: every SLO met and the run stable (the queue does
// not grow; a finite run's completed rate cannot tell, as its drain lowers it). A bisection over
// the rate, 14 simulations of the traffic's request count (at least 1,000, at most 20,000). nullopt when even a near-zero rate misses the SLOs.
std::optional<double> max_sustained_rate(const Traffic& traffic, const EnginePricing& pricing, const Slo& slo);

}  // namespace quantplan::serve
