#pragma once
// Capacity planning per scheme and the ranked recommendation (docs/capacity.md): the simulator
// (core/serve) run for every scheme of a plan request, on the request's GPU at its TP, and for
// every candidate GPU x scheme x TP against a target rate. The command line's --serve, and later
// the report and the window, show what this returns.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/plan/plan.h"
#include "core/serve/capacity.h"

namespace quantplan::serve {

// What the planner is asked.
struct CapacityRequest {
    Traffic traffic;
    Slo slo;
    std::optional<double> target_rate;       // replicas and the ranking for this rate (requests/s)
    std::map<std::string, double> prices;    // GPU id -> USD per GPU-hour
    // Latency against rate for the charts: runs at these fractions of each scheme's highest rate
    // (empty: none).
    std::vector<double> sweep_fractions = {0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25};
    std::size_t timeline_points = 256;       // the timeline kept of the run asked for (0: none)
    // False: only the run asked for (a rate, a concurrency, a trace or a burst), without the
    // highest-rate search, the sweeps, replicas, costs or the ranking: the window's quick first look.
    bool search = true;
    // Called between simulations with the share done (0..1) and what runs next; it may throw to
    // cancel (the window's background job does), and nothing is left half-done.
    std::function<void(double, const std::string&)> progress;
};

// One scheme on the request's GPU at its TP.
struct SchemeCapacity {
    std::string name;
    bool fits = false;
    std::string reason;                       // why not, when it does not fit
    std::optional<std::int64_t> fits_from_tp;
    serve::ServeStats stats;                  // the run asked for
    std::optional<double> max_rate;
    std::optional<Binding> binding;           // what binds above max_rate (with the search)
    std::optional<std::int64_t> replicas, gpus;
    // Spare capacity of those replicas at the target: replicas x highest rate / target - 1 (0.25:
    // they carry 25% more than the target).
    std::optional<double> headroom;
    std::optional<double> cost_output, cost_input;  // USD per million tokens at the maximum rate
    std::vector<RatePoint> sweep;             // latency against rate around the maximum rate
};

// One configuration of the ranked recommendation.
struct Configuration {
    std::string gpu, scheme;
    std::int64_t tp = 1, replicas = 0, gpus = 0;
    double max_rate = 0;
    double headroom = 0;  // replicas x max_rate / target - 1
    Binding binding;      // what stops a replica from carrying more
    std::optional<double> usd_per_hour, cost_output;
};

struct CapacityPlan {
    std::vector<SchemeCapacity> schemes;  // in the request's order
    // The serving fit's bands of the request's engine (engine::ServingBand: p10-p90 of
    // predicted / measured - 1, leave-one-source-out) and the engine they are for.
    std::vector<engine::ServingBand> bands;
    std::string engine;
    std::vector<Configuration> ranked;    // cheapest first (empty without a target rate)
    std::vector<std::string> vetoes;      // schemes the accuracy tolerance vetoes, with why
};

// Where the measured value of a figure ("ttft_s", "tpot_s", "requests_per_s") predicted as
// `predicted` is expected to lie, from the plan's serving-fit band of residuals
// e = predicted / measured - 1: [predicted / (1 + p90), predicted / (1 + p10)].
struct FigureBand {
    double low = 0;
    double high = 0;
    engine::ServingBand band;  // the residuals' band it comes from
};
// nullopt when the plan has no band for the figure (--serving-fit none).
std::optional<FigureBand> figure_band(const CapacityPlan& plan, const std::string& figure, double predicted);

// The longest request the traffic can hold (input + output): the engine's max_model_len.
std::int64_t longest_request(const Traffic& traffic);

// Runs the traffic for every scheme of `request` (schemes filled in, engine set) and, with a
// target rate, ranks every `candidates` GPU (each a request like `request` on another GPU) x
// scheme within the accuracy tolerance x its smallest TP and twice that. Every engine runs with
// max_model_len the longest request of the traffic (the request's batch and context are not
// used). Throws Error naming the option for an SLO below the fastest possible step or a request
// longer than the model's max_position_embeddings.
CapacityPlan capacity_plan(const PlanRequest& request, const std::vector<PlanRequest>& candidates, const CapacityRequest& ask);

// One pool of disaggregated serving (core/serve/disagg.h): `scheme` at TP `tp` on the request's
// GPU and engine, with max_model_len `longest`, its admission and the simulator's pricing. Throws
// Error(option) when it does not fit or its KV cache cannot hold one request of `longest` tokens.
struct PoolPricing {
    EnginePricing pricing;
    Admission admission;
    SchemeCosts costs;
};
PoolPricing pool_pricing(const PlanRequest& request, const Scheme& scheme, std::int64_t tp, std::int64_t longest, const std::string& option);

// JSON `serve`: one object per scheme with the capacity issue's keys (docs/capacity.md).
nlohmann::json serve_json(const CapacityPlan& plan);

// JSON `serve_recommendation`: the target, the ranked configurations and the vetoes; null without a target.
nlohmann::json recommendation_json(const CapacityPlan& plan, const std::optional<double>& target);

}  // namespace quantplan::serve
