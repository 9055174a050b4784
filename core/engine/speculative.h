#pragma once
// Speculative decoding (EAGLE-3, EAGLE, MTP, n-gram, draft models): what --spec asks, the acceptance
// it is priced at, what the draft adds to memory and to each step, and a speculative step priced by
// the engine step model or the roofline (docs/speculative.md).
//
// A speculative step of a batch of B sequences at context L, as vLLM V1 and SGLang run it:
//   verify: the target scores K + 1 tokens per sequence (engine_decode_step with query_tokens
//           K + 1: weights read once, linears and lm_head over B(K + 1) rows, each cache read once);
//   draft:  the proposer's forwards (an EAGLE head or an MTP module: one decoder layer and an
//           lm_head; a draft model: its whole decode step) and, for n-gram, host time per sequence.
// Each sequence gains 1 + (speculative tokens accepted) tokens: on average the mean acceptance
// length 1 + sum_i p_i, where p_i is the share of steps whose first i speculative tokens were all
// accepted (the per-position acceptance rate vLLM logs).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/step_model.h"

namespace quantplan::engine {

enum class SpecMethod { Eagle3, Eagle, Mtp, Ngram, Draft };

// "eagle3", "eagle", "mtp", "ngram", "draft".
std::string_view spec_method_name(SpecMethod method);

// What --spec asked: METHOD:K, or draft:MODEL:K.
struct SpecRequest {
    SpecMethod method = SpecMethod::Eagle3;
    std::int64_t k = 0;          // speculative tokens per step
    std::string draft_model;     // draft:MODEL's MODEL (a bundled name or a config.json path)
};

// The largest K quantplan accepts (vLLM V1's MAX_SPEC_LEN from 0.11.0); an engine version's own limit
// applies below it (check_spec_request).
inline constexpr std::int64_t kMaxSpecTokens = 128;

// Parses METHOD:K (METHOD eagle3, eagle, mtp, ngram) or draft:MODEL:K. Throws Error(option) naming
// what is wrong: an unknown method, a missing or non-integer K, K below 1 or above kMaxSpecTokens.
SpecRequest parse_spec(std::string_view text, std::string_view option = "--spec");

// The acceptance a speculative step is priced at.
struct Acceptance {
    // p_i, i = 1..K: the share of steps whose first i speculative tokens were all accepted (vLLM's
    // "Per-position acceptance rate"); non-increasing, each in [0, 1].
    std::vector<double> per_position;
    // Where it came from: "--spec-acceptance", "default: ..." with its source, "log: ...".
    std::string source;
    // Tokens a step gives a sequence on average: 1 + sum p_i (vLLM's "Mean acceptance length",
    // SGLang's "accept len").
    double mean_length() const;
};

// Parses --spec-acceptance for K speculative tokens: a list of K per-position rates
// ("0.8,0.6,0.45"), or one number: a mean acceptance length when it is 1 or more ("2.9"), the
// rate of the only position when below 1 and K is 1. Throws Error(option): a rate outside [0, 1],
// rates that rise with the position, a count other than K, a mean length above K + 1 or below 1.
Acceptance parse_acceptance(std::string_view text, std::int64_t k, std::string_view option = "--spec-acceptance");

// The per-position rates of a mean acceptance length at K: one conditional acceptance rate a for
// every position (p_i = a^i) such that 1 + sum p_i equals it. Throws Error if the length is outside
// [1, K + 1].
Acceptance acceptance_from_mean_length(double mean_length, std::int64_t k);

// `a` at another K: truncated, or extended at its last conditional rate (p_K / p_{K-1}; p_1 for one
// position). The source says so when it changed.
Acceptance acceptance_for_k(const Acceptance& a, std::int64_t k);

// The speculative tokens one step accepts for a uniform draw u in [0, 1): the largest i with
// u < p_i (0 when none). Over many draws the mean is sum p_i.
std::int64_t accepted_tokens(const Acceptance& a, double u);

// A published acceptance a default is taken from (assets/measurements/speculative/speculative-decoding.json,
// "acceptance_defaults").
struct SpecDefault {
    std::string family;      // a bundled model name, or a family prefix ("llama-3.1")
    std::string method;      // spec_method_name
    std::string dataset;
    std::int64_t k = 0;      // the K it was measured at (0: not stated)
    Acceptance acceptance;   // at k (a mean length alone: acceptance_from_mean_length)
    std::string record;      // the corpus record it comes from
    std::string note;
};

// An engine version's speculative decoding (assets/engines/speculative/speculative.json).
struct SpecEngineRange {
    std::string from;            // first version (inclusive)
    std::string to;              // last version (inclusive); empty: open
    std::vector<std::pair<std::string, std::string>> methods;  // method -> first version it runs in
    std::int64_t max_k = 0;      // the engine's own limit on K (0: none enforced)
    std::string max_k_where;     // where it is enforced
    std::int64_t disable_above_batch = 0;  // speculation off above this batch by default (0: never)
    std::string disable_option;  // the option that sets it, when the version honours one
};

struct SpecTerms;

struct SpecCatalog {
    std::vector<SpecDefault> defaults;
    std::vector<SpecEngineRange> vllm, sglang;
    std::string defaults_path, engines_path;
    std::map<std::string, SpecTerms> terms;  // the fitted terms by engine (load_spec_fit); empty: none
};

// Reads the files (any path may be empty: that part stays empty), the fit file's terms included.
// Throws Error naming the file and the field for a malformed one.
SpecCatalog load_spec_catalog(const std::string& engines_path, const std::string& measurements_path, const std::string& fit_path = {});

// The published acceptance for `model` and `method`: the entry for the model's own name first,
// then the longest family prefix of its name, then (n-gram and draft models) any entry of the
// method. Taken at K with acceptance_for_k; its source names the dataset and the record.
std::optional<Acceptance> default_acceptance(const SpecCatalog& catalog, const ModelConfig& model, SpecMethod method, std::int64_t k);

// The engine range `version` falls in; an empty version is the newest (the open range). nullptr:
// none listed, or the engine has none.
const SpecEngineRange* spec_engine_range(const SpecCatalog& catalog, std::string_view engine, std::string_view version);

// Refuses what the engine at `version` cannot run, with one line: a method before its first
// release, K above the engine's limit, MTP on a model without MTP layers, a draft model with
// another vocabulary. Throws Error(option).
void check_spec_request(const SpecRequest& spec, const ModelConfig& target, const ModelConfig* draft, const SpecCatalog* catalog,
                        std::string_view engine, std::string_view version, std::string_view option = "--spec");

// The KV slots a decoding sequence holds beyond its tokens and the K it verifies: vLLM V1 reserves
// num_lookahead_tokens = K more for the drafter (EAGLE, EAGLE-3 and MTP from 0.8.4, draft models
// from 0.15.0; none for n-gram: v1/core/sched/scheduler.py allocate_slots), SGLang none beyond the
// verify's (docs/speculative-sources.md).
std::int64_t spec_lookahead_slots(std::string_view engine, SpecMethod method, std::int64_t k);

// SGLang's default max_running_requests with speculative decoding (server_args.py: 48; 32 in
// 0.4.3.post3 to 0.4.4.post3); 0 for vLLM, which keeps max_num_seqs.
std::int64_t spec_default_max_running(std::string_view engine, std::string_view version);

// What the draft adds, per GPU.
struct DraftCost {
    std::string description;              // e.g. "EAGLE-3 head: 1 decoder layer + fc + lm_head of 32,000 (bf16)"
    std::uint64_t weight_bytes = 0;       // resident beside the target's weights
    std::uint64_t kv_bytes_per_token = 0; // the draft's own cache (its layers share the block pool)
    // Forwards per step: one over every token the step verified (B x (K + 1) rows) and `single`
    // over one row per sequence (vLLM V1's EagleProposer.propose: the first pass and K - 1 more).
    std::int64_t extend_forwards = 0;
    std::int64_t single_forwards = 0;
    double layer_bytes = 0;               // one forward's decoder-layer weights (EAGLE, MTP)
    double layer_flop_per_row = 0;
    double head_bytes = 0;                // the draft's lm_head
    double head_flop_per_row = 0;
    double attention_share = 0;           // one forward's attention as a share of the target's (its layers / the target's)
    std::int64_t layers = 0;              // decoder layers per forward
    bool runs_draft_model = false;        // forwards are the draft model's whole decode steps
};

// The draft of `spec` for `target` (costs: the target's as served) at tensor-parallel `tp`:
// EAGLE-3 one decoder layer of the target's shape taking 2 x hidden into q/k/v, an fc over three
// hidden states and an lm_head, priced at the target's vocabulary (published heads may use a
// smaller draft vocabulary: 32,000 for the Llama 3 EAGLE-3 heads; not known from the config), in
// bf16; EAGLE one layer and an fc over two, sharing the target's lm_head; MTP the model's own MTP
// modules (one decoder layer each, priced at the target's scheme, with the shared lm_head); a draft
// model its weights and cache (draft_costs); n-gram nothing on the GPU.
DraftCost draft_cost(const SpecRequest& spec, const ModelConfig& target, const SchemeCosts& target_costs, const ModelConfig* draft,
                     const SchemeCosts* draft_costs, std::int64_t tp);

// The per-step costs the corpus fits (docs/speculative.md): each draft forward's fixed launch and
// sampling cost, and the host's work per sequence of a speculative step (the rejection sampler,
// bookkeeping of the accepted tokens).
struct SpecTerms {
    double draft_forward_s = 0;
    double host_per_sequence_s = 0;
    double ngram_per_sequence_s = 0;
    // The fit's speed-up band: p10 and p90 of its leave-one-out residuals (predicted / measured - 1);
    // a predicted speed-up x lies in [x / (1 + p90), x / (1 + p10)]. Both 0: no band.
    double band_p10 = 0, band_p90 = 0;
};

// The fitted terms of every engine in a spec-fit file (written by --fit-spec, docs/speculative.md):
// {"format": "quantplan-spec-fit/1", "engines": {"vllm": {"draft_forward_s": ..., ...}},
// "speedup_error": {"band_p10": ..., "band_p90": ...}}. Throws Error naming the file for a malformed one.
std::map<std::string, SpecTerms> load_spec_fit(const std::string& path);
// One engine's (zeros for an engine the file does not list).
SpecTerms load_spec_terms(const std::string& path, std::string_view engine);
// `engine`'s terms in a catalog (zeros when it has none).
SpecTerms spec_terms_for(const SpecCatalog& catalog, std::string_view engine);

// A draft model's pricing (draft:MODEL): its costs, config and resolved lookups.
struct DraftModelPricing {
    const SchemeCosts* costs = nullptr;
    const ModelConfig* model = nullptr;
    StepLookups lookups;
};

// One speculative step beside the plain decode step at the same batch and context.
struct SpecStep {
    double verify_s = 0;
    double draft_s = 0;
    double host_s = 0;
    double time_s = 0;               // verify + draft + host
    double plain_s = 0;              // the plain decode step
    double tokens_per_step = 1;      // per sequence: the mean acceptance length
    double tpot_s = 0;               // time_s / tokens_per_step
    double plain_tpot_s = 0;
    double speedup = 1;              // plain_tpot_s / tpot_s
    bool verify_eager = false;       // the verify step ran without a CUDA graph
    bool disabled = false;           // the engine turns speculation off at this batch (plain step)
};

// Prices a speculative step with the engine step model.
SpecStep engine_spec_step(const StepLookups& lookups, const SchemeCosts& costs, const ModelConfig& model, const GpuProfile& gpu,
                          const EngineSetup& setup, const Workload& w, std::int64_t batch, std::int64_t context, const SpecRequest& spec,
                          const Acceptance& acceptance, const DraftCost& draft, const SpecTerms& terms,
                          const DraftModelPricing* draft_model = nullptr, std::int64_t disable_above_batch = 0);

// The same with the roofline of `eff` (plans without an engine profile): verify_step, and each draft
// forward's bytes and FLOPs at the efficiency's bandwidth and rates.
SpecStep roofline_spec_step(const SchemeCosts& costs, const GpuProfile& gpu, const EfficiencyProfile& eff, const Workload& w,
                            std::int64_t batch, std::int64_t context, const SpecRequest& spec, const Acceptance& acceptance,
                            const DraftCost& draft, const SchemeCosts* draft_costs = nullptr);

}  // namespace quantplan::engine
