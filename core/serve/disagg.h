#pragma once
// Disaggregated prefill and decode (docs/disaggregation.md): P prefill instances and D decode
// instances, each an engine of its own (scheme, TP, GPU, settings), and the KV cache of every
// prompt sent from the prefill instance that computed it to a decode instance over an interconnect.
//
// A request, as vLLM's and SGLang's PD connectors run it:
//   1. a prefill instance (round robin over P) prefills its prompt (the simulator, one output token);
//   2. the prompt's KV bytes (tokens x the prefill side's bytes per token, every layer; MLA's latent
//      as it is) go over the link: each of the min(prefill TP, decode TP) GPU pairs sends its share
//      over its own NIC, at the link's per-direction bandwidth, after its latency. With the
//      connector's layer-wise overlap a layer is sent as soon as it is computed, so the transfer
//      ends one layer's share after the prefill (or when the link is free); without, it starts when
//      the prefill ends. One prefill instance sends one transfer at a time (its links are a queue),
//      and holds the prompt's KV until it is sent;
//   3. a decode instance (round robin over D) admits it once its KV has arrived (Request::kv_ready)
//      and decodes it; the first decode step samples the first token the client sees.
// Deterministic for the traffic's seed. Little's law holds per pool (SimulationResult's own check)
// and end to end (littles_law over the composed result).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/serve/capacity.h"

namespace quantplan::serve {

// A link between GPUs (assets/interconnects/).
struct Interconnect {
    std::string id;
    std::string name;
    std::string scope;                       // "intra-node" or "inter-node"
    double bandwidth_bytes_per_s = 0;        // per GPU, one direction
    double latency_s = 0;                    // one-way, a small message (0 when no source gives one)
    std::string source;                      // where the figures come from
};

// Parses an interconnect profile (format quantplan-interconnect/1). Throws Error(source) naming the
// field: a missing or non-positive bandwidth, a negative latency.
Interconnect parse_interconnect(std::string_view text, const std::string& source);

// A bundled id (assets/interconnects/ID.json) or a profile file. Throws Error("--interconnect").
Interconnect resolve_interconnect(std::string_view argument, const std::filesystem::path& interconnects_dir);

// Every profile of `dir` (*.json), sorted by id; a file that does not parse is skipped (the
// command line names it when it is asked for). Empty when the folder does not exist.
std::vector<Interconnect> load_interconnects(const std::filesystem::path& dir);

// What a connector's transfer engine adds to the link (fitted to the published transfer times of
// the disaggregated corpus, `quantplan --fit-disagg`, assets/engines/fit/kv-transfer-fit.json;
// docs/disaggregation.md): a cost per transfer (the request's handshake, its descriptors, the
// completion notice) and the share of the links' line rate the engine reaches. A request's send
// takes per_transfer_s + bytes / (links x bandwidth x line_rate_fraction). Unfitted: 0 and 1, the
// line rate.
struct TransferTerms {
    double per_transfer_s = 0;
    double line_rate_fraction = 1;
    std::int64_t points = 0;       // the transfer times it was fitted to (0: not fitted)
    std::string basis;             // what it was fitted to, or why the line rate stands
};

// How a PD connector moves a prompt's KV cache, and how the request reaches the decode side.
struct KvConnector {
    std::string id;
    bool layerwise = false;        // sent layer by layer while the prefill computes them; else whole, after the prefill
    bool decode_frontend = false;  // the decode request passes the decode server's own frontend (HTTP, tokenization) after the prefill returns
    std::string how;               // one line, with the source
    TransferTerms transfer;        // the line rate until apply_transfer_fit
};

// One published transfer time: the bytes one link carries (the request's KV over the links between
// the pools), that link's line rate and latency, and the time measured.
struct TransferPoint {
    double bytes_per_link = 0;
    double bandwidth_bytes_per_s = 0;
    double latency_s = 0;
    double measured_s = 0;
};

// The terms that fit `points` best in relative error (least squares of predicted / measured - 1):
// per_transfer_s at least 0, line_rate_fraction in (0, 1] (each held at its bound when the free
// fit leaves it). Needs two points of different sizes; otherwise the line rate (points 0).
TransferTerms fit_transfer_terms(const std::vector<TransferPoint>& points);

// The time `terms` give one transfer of `bytes_per_link` over a link.
double transfer_time_s(const TransferTerms& terms, double bytes_per_link, double bandwidth_bytes_per_s, double latency_s);

// The fitted terms per connector id (format quantplan-kv-transfer-fit/1: {"corpus_checksum": the
// disaggregated corpus's, "connectors": {"<id>": {"per_transfer_s", "line_rate_fraction",
// "points", "basis"}}}). Throws Error(source) naming the field. transfer_fit_json writes what
// parse_transfer_fit reads.
std::map<std::string, TransferTerms> parse_transfer_fit(std::string_view text, const std::string& source);
nlohmann::json transfer_fit_json(const std::map<std::string, TransferTerms>& fit, const std::string& corpus_checksum);

// The fit file's terms for the connector's id, when it has them (else its line rate stays, with a
// basis saying so). An absent file leaves every connector at the line rate; a malformed one throws.
void apply_transfer_fit(KvConnector& connector, const std::map<std::string, TransferTerms>& fit);
std::map<std::string, TransferTerms> load_transfer_fit(const std::filesystem::path& file);

// The bundled connectors (their semantics from each engine's source; docs/disaggregation.md):
//   nixl      vLLM's NixlConnector behind vLLM's disagg proxy or llm-d's routing sidecar: the proxy
//             sends the prompt to a prefill server (max_tokens 1), then to a decode server with the
//             returned kv_transfer_params; the decode scheduler allocates the blocks and its worker
//             pulls the whole KV (save_kv_layer and wait_for_layer_load are no-ops:
//             vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py);
//   p2p-nccl  vLLM's P2pNcclConnector: each layer sent as it is computed (save_kv_layer);
//   dynamo    NVIDIA Dynamo's vLLM workers: one (Rust) frontend, the decode worker sends the
//             prefill to a prefill worker, which writes the whole KV over NIXL after its prefill;
//   mooncake  vLLM's MooncakeConnector behind the same proxy as nixl: the prefill server keeps the
//             blocks when the request finishes, the decode server asks for them and Mooncake's
//             transfer engine writes the whole KV (no layer-wise saving:
//             vllm/distributed/kv_transfer/kv_connector/v1/mooncake_connector.py);
//   sglang    SGLang's PD disaggregation (Mooncake or NIXL transfer backends): the router sends
//             the request to a prefill and a decode server together; the prefill server sends the
//             KV after its prefill chunks (python/sglang/srt/disaggregation/prefill.py).
// "" takes the engine's default: nixl for vLLM, sglang for SGLang. Throws Error("--kv-connector")
// naming the ones there are.
KvConnector resolve_connector(std::string_view id, std::string_view engine);

// The KV bytes a prompt token moves from the prefill to the decode pool: what the decode
// instance's ranks hold of it, every rank its own heads. Each decode rank reads the blocks of its
// heads from the prefill rank(s) that hold them (vLLM's NixlConnector `_read_blocks_for_req`: one
// read per source rank, a single one for MLA's latent, which every rank holds whole; SGLang's
// Mooncake backend likewise sends each decode rank its slice), so a KV head that TP replicates
// (TP above the KV heads) moves once per rank that holds it, and MLA's latent once per rank:
// kv_bytes_per_token_per_gpu(costs, decode_tp) x decode_tp. Mooncake's SGLang page measures it:
// Qwen3-235B-A22B (4 KV heads) at TP 8 moves 49 MB for 128 tokens, twice the model's 24.6 MB.
double kv_transfer_bytes_per_token(const SchemeCosts& costs, std::int64_t decode_tp);

// One pool: its instances, each an engine priced by `pricing`.
struct DisaggPool {
    EnginePricing pricing;
    std::int64_t instances = 1;
    std::int64_t tp = 1;
    std::string scheme;
    std::string gpu;
};

struct DisaggSpec {
    DisaggPool prefill, decode;
    Interconnect link;
    // The links a prefill instance sends over, each at the link's bandwidth (--interconnect-links):
    // 0, one per GPU pair, min(prefill TP, decode TP) (a DGX H100 has a NIC per GPU); a node whose
    // GPUs share fewer NICs sends over those (Mooncake's H20 page: 4 x 400GbE for 8 GPUs).
    std::int64_t links = 0;
    double kv_bytes_per_token = 0;   // KV bytes moved per prompt token (kv_transfer_bytes_per_token)
    std::int64_t layers = 1;         // the model's layers (the layer-wise overlap's unit)
    bool layerwise = true;           // the connector sends layer by layer as the prefill computes them
    bool decode_frontend = false;    // the decode request passes the decode server's frontend too (KvConnector)
    TransferTerms transfer;          // the connector's cost per transfer and share of the line rate
    // Called between passes of the iterations below (it may throw to cancel: the window's jobs do).
    std::function<void()> poll;
};

// The links a prefill instance sends over: DisaggSpec::links, else one per GPU pair.
std::int64_t effective_links(const DisaggSpec& spec);

// A run's figures.
struct DisaggStats {
    ServeStats end_to_end;                  // as the client sees it (ttft, tpot, itl, e2e, rates, SLOs)
    Percentiles transfer_s;                 // from the prefill's end to the KV's arrival
    Percentiles transfer_wait_s;            // of it, waiting for the link
    double prefill_utilization = 0;         // busy time over the run's span, mean over the prefill instances
    double decode_utilization = 0;
    double link_utilization = 0;            // time the links were sending, over the span, mean over prefill instances
    double decode_kv_utilization = 0;       // time-weighted share of KV blocks in use, mean over the decode instances
    double prefill_mean_in_system = 0, prefill_throughput_times_latency = 0;  // Little's law, prefill pool
    double decode_mean_in_system = 0, decode_throughput_times_latency = 0;    // and decode pool
    double end_mean_in_system = 0, end_throughput_times_latency = 0;          // end to end
    // The two iterations a run may take, and how far from settled each ended (0: settled): the
    // prefill instances' KV holds against the transfers, and a closed loop's send times against
    // the completions (1 pass for an open loop).
    int hold_passes = 0, closed_loop_passes = 1;
    double hold_residual_s = 0, closed_loop_residual_s = 0;
};

// Runs `traffic` through the two pools: open loop at `rate_per_s` (or the traffic's own rate, a
// burst or a trace), or closed loop with the traffic's concurrency (users that send their next
// request when the last one finishes, as a benchmark client with a concurrency cap does; the send
// times are the fixed point of the pools' completions, iterated from "all at once" until no send
// time moves by more than a microsecond: about 1.3 x requests / users passes in the tests, each a
// run of both pools; a run not settled after twice that says how far from settled it ended in
// DisaggStats::closed_loop_residual_s). Throws Error("--serve") as simulate() does (a decode instance
// whose KV cache cannot hold one request), Error("--requests") for a closed loop of more than
// kMaxClosedLoopRequestsPerUser requests per user (its passes, each a run of both pools, grow
// with them).
inline constexpr std::int64_t kMaxClosedLoopRequestsPerUser = 250;
DisaggStats run_disagg(const Traffic& traffic, const DisaggSpec& spec, const Slo& slo, std::optional<double> rate_per_s = std::nullopt);

// "P:D" -> {P, D}, each 1 to 64. Throws Error("--disagg").
std::pair<std::int64_t, std::int64_t> parse_disagg(std::string_view text);

}  // namespace quantplan::serve
