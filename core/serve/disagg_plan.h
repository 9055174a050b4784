#pragma once
// Disaggregated serving as a plan (docs/disaggregation.md): a P:D layout priced per pool and run
// beside aggregated serving on the same GPUs, with the winner and the bound; the search for the
// cheapest disaggregated layout (P, D, and TP, scheme and GPU type per pool) beside the cheapest
// aggregated one; and the sweeps that show where splitting starts to pay, in prompt length and in
// TPOT SLO. The command line (--serve --disagg), the report and the window show what this returns.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/serve/capacity_plan.h"
#include "core/serve/disagg.h"

namespace quantplan::serve {

// One pool's engine: the plan request on its GPU (the model, the engine setup and its defaults),
// the scheme and the TP.
struct PoolChoice {
    PlanRequest request;
    Scheme scheme;
    std::int64_t tp = 1;
};

// A layout to run: the two pools with their instance counts, the link, and the aggregated
// configuration it is compared with (its replicas fill the same GPUs).
struct DisaggAsk {
    PoolChoice prefill, decode, aggregated;
    std::int64_t prefill_instances = 1, decode_instances = 1;
    Interconnect link;
    std::int64_t links = 0;    // links a prefill instance sends over (DisaggSpec::links; 0: one per GPU pair)
    KvConnector connector;
    Traffic traffic;
    Slo slo;
    std::function<void()> poll;   // between the runs' passes (it may throw to cancel)
};

struct DisaggComparison {
    DisaggSpec spec;
    KvConnector connector;
    DisaggStats stats;
    std::int64_t gpus = 0;                       // P x prefill TP + D x decode TP
    std::int64_t replicas = 0;                   // aggregated replicas on those GPUs (at least 1)
    std::int64_t aggregated_tp = 1;
    std::string aggregated_scheme, aggregated_gpu;
    std::optional<ServeStats> aggregated;        // one replica's figures (the traffic split evenly)
    std::string aggregated_refused;              // why it does not run, when it does not
    std::string winner;                          // "disaggregated", "aggregated" or "neither"
    std::string winner_detail;                   // the sentence: by which figure, and the figures
    std::string bound;                           // "transfer_bandwidth", "decode_kv_capacity", "prefill_interference" or "none"
    std::string bound_detail;
};

// Prices both pools (pool_pricing, max_model_len the traffic's longest request) and runs the
// layout and the aggregated replicas. Throws Error naming the option (--prefill-tp, --decode-tp)
// for a pool that does not fit; an aggregated configuration that does not fit is reported, not
// thrown.
DisaggComparison compare_disagg(const DisaggAsk& ask);

// JSON `disagg` without `search` and `sweeps` (docs/disaggregation.md).
nlohmann::json disagg_json(const DisaggComparison& c);

// What one configuration costs: GPUs, and USD per hour when every GPU it uses has a price.
struct LayoutCost {
    std::int64_t gpus = 0;
    std::optional<double> usd_per_hour;
    // Cheaper: a priced layout before an unpriced one, then by USD per hour, then by GPUs (a strict
    // weak order).
    bool cheaper_than(const LayoutCost& other) const;
};

// The search (`--disagg auto`).
struct DisaggSearchAsk {
    std::vector<PoolChoice> prefill, decode, aggregated;   // the candidates of each (TP, scheme, GPU)
    Interconnect link;
    std::int64_t links = 0;    // links a prefill instance sends over (DisaggSpec::links; 0: one per GPU pair)
    KvConnector connector;
    Traffic traffic;                                       // open loop: the rate to hold is its rate
    Slo slo;
    std::map<std::string, double> prices;                  // GPU id -> USD per GPU-hour
    std::int64_t max_gpus = 64;                            // neither answer uses more
    // Called between simulations with the share done and what runs next (it may throw to cancel).
    std::function<void(double, const std::string&)> progress;
};

// A candidate that does not fit, or holds no rate, and why (the search's table).
struct SkippedChoice {
    std::string role;    // "prefill", "decode", "aggregated"
    std::string label;   // "w4a16-g128 TP 2 on h100-sxm"
    std::string reason;
};

struct DisaggSearch {
    // The cheapest disaggregated layout that holds the rate within the SLOs: its pools and counts.
    std::optional<PoolChoice> prefill, decode;
    std::int64_t prefill_instances = 0, decode_instances = 0;
    LayoutCost disaggregated_cost;
    double prefill_instance_rate = 0, decode_instance_rate = 0;  // what one instance of each carries (its pool's sizing)
    // The cheapest aggregated configuration that holds it.
    std::optional<PoolChoice> aggregated;
    std::int64_t aggregated_replicas = 0;
    double aggregated_replica_rate = 0;
    LayoutCost aggregated_cost;
    std::vector<SkippedChoice> skipped;
    std::size_t layouts_run = 0;   // disaggregated layouts simulated end to end
};

// Sizes each pool candidate on its own (the highest rate one instance carries: a prefill instance
// within the TTFT SLO, a decode instance within the TPOT SLO, each without a growing queue), pairs
// them with P = ceil(rate / prefill rate) and D = ceil(rate / decode rate), and runs the cheapest
// pairs end to end through run_disagg, adding an instance to the pool that misses (TTFT: prefill,
// else decode) until the layout holds; the same for aggregated replicas with max_sustained_rate.
// Throws Error("--disagg") for a traffic without a rate.
DisaggSearch search_disagg(const DisaggSearchAsk& ask);

nlohmann::json disagg_search_json(const DisaggSearch& s);

// One point of a sweep: the cheapest of each at one prompt length or one TPOT SLO.
struct SweepPoint {
    double x = 0;                                  // prompt tokens, or the TPOT SLO in seconds
    std::optional<LayoutCost> disaggregated, aggregated;
    std::int64_t prefill_instances = 0, decode_instances = 0, aggregated_replicas = 0;
    std::string winner;                            // "disaggregated", "aggregated", "neither" (same cost) or "none" (neither holds)
    std::string note;                              // why neither was sized here (a prompt the model or a pool cannot hold), else empty
};

struct DisaggSweep {
    std::string axis;                              // "prompt_tokens" or "tpot_slo_s"
    std::vector<SweepPoint> points;
    // The first x (in the sweep's order) from which disaggregation is the cheaper at every later
    // point where a layout holds (the first x when it is everywhere); nullopt when it is not at the
    // last such point.
    std::optional<double> crossover;
    std::string summary;                           // one line
};

// The sweeps: the search's pools (its TP, scheme and GPU per pool and for aggregated, fixed) sized
// again at each prompt length of `prompt_tokens` (the output length and rate as given) and at each
// TPOT SLO of `tpot_slos` (the rest as given).
DisaggSweep sweep_prompt_length(const DisaggSearchAsk& ask, const DisaggSearch& found, const std::vector<std::int64_t>& prompt_tokens);
DisaggSweep sweep_tpot_slo(const DisaggSearchAsk& ask, const DisaggSearch& found, const std::vector<double>& tpot_slos);

nlohmann::json disagg_sweep_json(const DisaggSweep& s);

// One aggregated replica's share of a traffic served by `replicas` behind a balancer: the rate
// split evenly, or a closed loop's users and requests (rounded up).
Traffic replica_share(const Traffic& traffic, std::int64_t replicas);

// A pool's label: "w8a8-fp8 TP 2 on h100-sxm".
std::string pool_label(const PoolChoice& c);

}  // namespace quantplan::serve
