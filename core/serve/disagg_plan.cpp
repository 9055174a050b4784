#include "core/serve/disagg_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"

namespace quantplan::serve {
namespace {

std::string ms(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
    return buf;
}

std::string num(double v, int decimals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double d(std::int64_t v) { return static_cast<double>(v); }

nlohmann::json pct_json(const Percentiles& p) { return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}}; }

nlohmann::json stats_json(const ServeStats& s) {
    return {{"ttft_s", pct_json(s.ttft_s)},       {"tpot_s", pct_json(s.tpot_s)},       {"itl_s", pct_json(s.itl_s)},
            {"e2e_s", pct_json(s.e2e_s)},         {"requests_per_s", s.requests_per_s}, {"output_tokens_per_s", s.output_tokens_per_s},
            {"slo_attainment", s.slo_attainment}, {"goodput_requests_per_s", s.goodput_requests_per_s},
            {"preemptions", s.preemptions},       {"overloaded", s.overloaded}};
}

// A layout holds when its queue does not grow and every SLO is met.
bool holds(const ServeStats& s) { return !s.overloaded && s.stable && s.meets_slo; }

// The traffic's offered rate: its own rate, or a trace's mean rate; 0 for a closed loop.
double offered_rate(const Traffic& t) { return t.rate_per_s.value_or(t.trace.empty() ? 0.0 : trace_rate(t.trace)); }

}  // namespace

Traffic replica_share(const Traffic& t, std::int64_t replicas) {
    Traffic s = t;
    if (replicas <= 1) return s;
    // A trace without a rate runs at its own rate: each replica takes it at 1/R of that.
    if (!s.rate_per_s && !s.trace.empty() && trace_rate(s.trace) > 0) s.rate_per_s = trace_rate(s.trace);
    if (s.rate_per_s) *s.rate_per_s /= d(replicas);
    if (s.concurrency && !s.rate_per_s) {
        s.concurrency = std::max<std::int64_t>(1, (*s.concurrency + replicas - 1) / replicas);
        s.requests = std::max<std::int64_t>(1, (s.requests + replicas - 1) / replicas);
    }
    return s;
}

namespace {

LayoutCost cost_of(const std::map<std::string, double>& prices, const std::vector<std::pair<std::string, std::int64_t>>& gpus_by_type) {
    LayoutCost c;
    double usd = 0;
    bool priced = true;
    for (const auto& [gpu, n] : gpus_by_type) {
        c.gpus += n;
        const auto p = prices.find(gpu);
        if (p == prices.end()) priced = false;
        else usd += p->second * d(n);
    }
    if (priced) c.usd_per_hour = usd;
    return c;
}

nlohmann::json cost_json(const LayoutCost& c) {
    return {{"gpus", c.gpus}, {"usd_per_hour", c.usd_per_hour ? nlohmann::json(*c.usd_per_hour) : nlohmann::json(nullptr)}};
}

nlohmann::json choice_json(const PoolChoice& c) {
    return {{"scheme", scheme_name(c.scheme)}, {"tp", c.tp}, {"gpu", c.request.gpu.id}};
}

}  // namespace

std::string pool_label(const PoolChoice& c) { return scheme_name(c.scheme) + " TP " + std::to_string(c.tp) + " on " + c.request.gpu.id; }

bool LayoutCost::cheaper_than(const LayoutCost& other) const {
    // A strict weak order (the search sorts by it): priced layouts first, by USD per hour, then GPUs.
    if (usd_per_hour.has_value() != other.usd_per_hour.has_value()) return usd_per_hour.has_value();
    if (usd_per_hour && *usd_per_hour != *other.usd_per_hour) return *usd_per_hour < *other.usd_per_hour;
    return gpus < other.gpus;
}

DisaggComparison compare_disagg(const DisaggAsk& ask) {
    DisaggComparison c;
    const std::int64_t longest = longest_request(ask.traffic);
    const PoolPricing pp = pool_pricing(ask.prefill.request, ask.prefill.scheme, ask.prefill.tp, longest, "--prefill-tp");
    const PoolPricing dp = pool_pricing(ask.decode.request, ask.decode.scheme, ask.decode.tp, longest, "--decode-tp");
    DisaggSpec& spec = c.spec;
    spec.prefill = {pp.pricing, ask.prefill_instances, ask.prefill.tp, scheme_name(ask.prefill.scheme), ask.prefill.request.gpu.id};
    spec.decode = {dp.pricing, ask.decode_instances, ask.decode.tp, scheme_name(ask.decode.scheme), ask.decode.request.gpu.id};
    spec.link = ask.link;
    spec.links = ask.links;
    spec.kv_bytes_per_token = kv_transfer_bytes_per_token(pp.costs, ask.decode.tp);
    spec.layers = std::max<std::int64_t>(ask.prefill.request.model.num_layers, 1);
    spec.layerwise = ask.connector.layerwise;
    spec.decode_frontend = ask.connector.decode_frontend;
    spec.transfer = ask.connector.transfer;
    spec.poll = ask.poll;
    c.connector = ask.connector;
    c.stats = run_disagg(ask.traffic, spec, ask.slo);

    // Aggregated serving on the same GPUs: replicas of its configuration, the traffic split evenly.
    c.gpus = ask.prefill_instances * ask.prefill.tp + ask.decode_instances * ask.decode.tp;
    c.aggregated_tp = ask.aggregated.tp;
    c.aggregated_scheme = scheme_name(ask.aggregated.scheme);
    c.aggregated_gpu = ask.aggregated.request.gpu.id;
    c.replicas = std::max<std::int64_t>(1, c.gpus / ask.aggregated.tp);
    try {
        const PoolPricing ap = pool_pricing(ask.aggregated.request, ask.aggregated.scheme, ask.aggregated.tp, longest, "--tp");
        c.aggregated = run_traffic(replica_share(ask.traffic, c.replicas), ap.pricing, ask.slo);
    } catch (const Error& e) {
        c.aggregated_refused = e.what();
    }

    // What binds, and which wins.
    const ServeStats& dis = c.stats.end_to_end;
    const DisaggStats& ds = c.stats;
    if (ds.link_utilization > 0.7 || ds.transfer_s.p90 > 0.5 * std::max(dis.ttft_s.p50, 1e-9)) {
        c.bound = "transfer_bandwidth";
        c.bound_detail = "transfer bandwidth: the KV transfer takes " + ms(ds.transfer_s.p90) + " at p90 (" + spec.link.name + ", links busy " +
                         num(ds.link_utilization * 100, 0) + "%)";
    } else if (dis.preemptions > 0 || ds.decode_kv_utilization > 0.9) {
        c.bound = "decode_kv_capacity";
        c.bound_detail = "decode KV capacity: the decode pool " + (dis.preemptions > 0 ? "preempts " + std::to_string(dis.preemptions) + " requests"
                                                                                        : "fills " + num(ds.decode_kv_utilization * 100, 0) + "% of its KV cache on average");
    } else if (c.aggregated && c.aggregated->tpot_s.p50 > 1.1 * dis.tpot_s.p50) {
        c.bound = "prefill_interference";
        c.bound_detail = "prefill interference: aggregated decode steps carry prefill chunks (TPOT p50 " + ms(c.aggregated->tpot_s.p50) + " against " +
                         ms(dis.tpot_s.p50) + " on a decode pool)";
    } else {
        c.bound = "none";
        c.bound_detail = "neither pool saturates at this rate; the transfer and the idle share of each pool are the cost of splitting";
    }
    if (!c.aggregated) {
        c.winner = "disaggregated";
        c.winner_detail = "disaggregated (aggregated serving does not fit: " + c.aggregated_refused + ")";
    } else {
        // Within the SLOs first (attainment a point apart), then the E2E median (2% apart).
        const double a_dis = dis.slo_attainment, a_agg = c.aggregated->slo_attainment;
        if (ask.slo.any() && std::abs(a_dis - a_agg) > 0.01) {
            c.winner = a_dis > a_agg ? "disaggregated" : "aggregated";
            c.winner_detail = c.winner + " by SLO attainment (" + num(a_dis * 100, 1) + "% against " + num(a_agg * 100, 1) + "%)";
        } else {
            const double e_dis = dis.e2e_s.p50, e_agg = c.aggregated->e2e_s.p50;
            c.winner = e_dis < e_agg * 0.98 ? "disaggregated" : e_agg < e_dis * 0.98 ? "aggregated" : "neither";
            c.winner_detail = (c.winner == "neither" ? std::string("neither (within 2%)") : c.winner) + " by E2E p50 (" + ms(e_dis) + " against " + ms(e_agg) +
                              (ask.slo.any() ? ", both at the same SLO attainment)" : ")");
        }
    }
    return c;
}

nlohmann::json disagg_json(const DisaggComparison& c) {
    const DisaggStats& ds = c.stats;
    const DisaggSpec& spec = c.spec;
    return {{"pools",
             {{"prefill", {{"instances", spec.prefill.instances}, {"tp", spec.prefill.tp}, {"scheme", spec.prefill.scheme}, {"gpu", spec.prefill.gpu},
                           {"utilization", ds.prefill_utilization},
                           {"littles_law", {{"mean_in_system", ds.prefill_mean_in_system}, {"throughput_times_latency", ds.prefill_throughput_times_latency}}}}},
              {"decode", {{"instances", spec.decode.instances}, {"tp", spec.decode.tp}, {"scheme", spec.decode.scheme}, {"gpu", spec.decode.gpu},
                          {"utilization", ds.decode_utilization}, {"kv_utilization", ds.decode_kv_utilization},
                          {"littles_law", {{"mean_in_system", ds.decode_mean_in_system}, {"throughput_times_latency", ds.decode_throughput_times_latency}}}}}}},
            {"interconnect", {{"id", spec.link.id}, {"name", spec.link.name}, {"bandwidth_bytes_per_s", spec.link.bandwidth_bytes_per_s},
                              {"latency_s", spec.link.latency_s}, {"source", spec.link.source},
                              {"links", effective_links(spec)}}},
            {"kv_bytes_per_token", spec.kv_bytes_per_token},
            {"layerwise", spec.layerwise},
            {"connector", {{"id", c.connector.id}, {"layerwise", c.connector.layerwise}, {"decode_frontend", c.connector.decode_frontend}, {"how", c.connector.how},
                           {"transfer", {{"per_transfer_s", c.connector.transfer.per_transfer_s}, {"line_rate_fraction", c.connector.transfer.line_rate_fraction},
                                         {"fitted_points", c.connector.transfer.points}, {"basis", c.connector.transfer.basis}}}}},
            {"transfer_s", pct_json(ds.transfer_s)},
            {"transfer_wait_s", pct_json(ds.transfer_wait_s)},
            {"link_utilization", ds.link_utilization},
            {"gpus", c.gpus},
            {"end_to_end", stats_json(ds.end_to_end)},
            {"iterations", {{"hold_passes", ds.hold_passes}, {"hold_residual_s", ds.hold_residual_s},
                            {"closed_loop_passes", ds.closed_loop_passes}, {"closed_loop_residual_s", ds.closed_loop_residual_s}}},
            {"littles_law", {{"mean_in_system", ds.end_mean_in_system}, {"throughput_times_latency", ds.end_throughput_times_latency}}},
            {"aggregated", c.aggregated ? nlohmann::json{{"replicas", c.replicas}, {"tp", c.aggregated_tp}, {"scheme", c.aggregated_scheme},
                                                         {"gpu", c.aggregated_gpu}, {"per_replica", stats_json(*c.aggregated)},
                                                         {"requests_per_s", c.aggregated->requests_per_s * d(c.replicas)}}
                                        : nlohmann::json{{"refused", c.aggregated_refused}}},
            {"winner", c.winner_detail},
            {"winner_layout", c.winner},
            {"bound", c.bound_detail},
            {"bound_kind", c.bound}};
}

namespace {

// A pool candidate priced and sized on its own.
struct Sized {
    const PoolChoice* choice = nullptr;
    PoolPricing pricing;
    double rate = 0;   // what one instance carries
};

// The traffic one prefill instance sees: every request ends at its first token.
Traffic prefill_view(const Traffic& t) {
    Traffic p = t;
    p.output = LengthSpec{LengthSpec::Kind::Fixed, 1, 0, {}, "1"};
    for (Request& r : p.trace) r.output_tokens = 1;
    return p;
}

// The traffic one decode instance sees: every prompt's KV already there.
Traffic decode_view(const Traffic& t) {
    Traffic v = t;
    v.kv_ready = true;
    v.prefix_tokens = 0;
    for (Request& r : v.trace) r.kv_ready = true, r.shared_prefix_tokens = 0;
    return v;
}

std::vector<Sized> size_candidates(const std::vector<PoolChoice>& choices, const std::string& role, const Traffic& traffic, const Slo& slo,
                                   std::int64_t longest, bool decode_frontend, std::vector<SkippedChoice>& skipped,
                                   const std::function<void(const std::string&)>& tick) {
    std::vector<Sized> out;
    Slo own;  // the SLO the pool answers for on its own
    if (role == "prefill") own.ttft = slo.ttft;
    else if (role == "decode") own.tpot = slo.tpot;
    else own = slo;
    const Traffic view = role == "prefill" ? prefill_view(traffic) : role == "decode" ? decode_view(traffic) : traffic;
    for (const PoolChoice& c : choices) {
        tick(role + " " + pool_label(c));
        Sized s;
        s.choice = &c;
        try {
            s.pricing = pool_pricing(c.request, c.scheme, c.tp, longest, role == "prefill" ? "--prefill-tp" : role == "decode" ? "--decode-tp" : "--tp");
        } catch (const Error& e) {
            skipped.push_back({role, pool_label(c), e.what()});
            continue;
        }
        // A decode instance's requests passed the frontend on their way to the prefill pool, unless
        // the connector sends them through the decode server's own (KvConnector::decode_frontend).
        if (role == "decode" && !decode_frontend) s.pricing.pricing.limits.frontend_latency_s = 0, s.pricing.pricing.limits.frontend_serial_s = 0;
        const std::optional<double> rate = max_sustained_rate(view, s.pricing.pricing, own);
        if (!rate || !(*rate > 0)) {
            skipped.push_back({role, pool_label(c), "holds no rate within the " + std::string(role == "prefill" ? "TTFT" : role == "decode" ? "TPOT" : "") + " SLO"});
            continue;
        }
        s.rate = *rate;
        out.push_back(std::move(s));
    }
    return out;
}

std::int64_t instances_for(double rate, double per_instance) { return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(rate / per_instance - 1e-9))); }

}  // namespace

DisaggSearch search_disagg(const DisaggSearchAsk& ask) {
    const double rate = offered_rate(ask.traffic);
    if (!(rate > 0)) throw Error("--disagg", "the search needs an open-loop traffic (--rate, or a trace) to hold");
    DisaggSearch out;
    const std::int64_t longest = longest_request(ask.traffic);
    const double units = d(static_cast<std::int64_t>(ask.prefill.size() + ask.decode.size() + ask.aggregated.size())) + 8.0;
    double done = 0;
    const auto tick = [&](const std::string& what) {
        if (ask.progress) ask.progress(std::min(1.0, done / units), what);
        done += 1;
    };
    const bool df = ask.connector.decode_frontend;
    const std::vector<Sized> pre = size_candidates(ask.prefill, "prefill", ask.traffic, ask.slo, longest, df, out.skipped, tick);
    const std::vector<Sized> dec = size_candidates(ask.decode, "decode", ask.traffic, ask.slo, longest, df, out.skipped, tick);
    const std::vector<Sized> agg = size_candidates(ask.aggregated, "aggregated", ask.traffic, ask.slo, longest, df, out.skipped, tick);

    // Disaggregated: every pair sized by rate matching, the cheapest run end to end.
    struct Pair {
        const Sized* p;
        const Sized* q;
        std::int64_t pc, dc;
        LayoutCost cost;
    };
    const auto pair_cost = [&](const Sized& p, const Sized& q, std::int64_t pc, std::int64_t dc) {
        return cost_of(ask.prices, {{p.choice->request.gpu.id, pc * p.choice->tp}, {q.choice->request.gpu.id, dc * q.choice->tp}});
    };
    std::vector<Pair> pairs;
    for (const Sized& p : pre)
        for (const Sized& q : dec) {
            const std::int64_t pc = instances_for(rate, p.rate), dc = instances_for(rate, q.rate);
            const LayoutCost cost = pair_cost(p, q, pc, dc);
            if (cost.gpus <= ask.max_gpus) pairs.push_back({&p, &q, pc, dc, cost});
        }
    // Cheapest first; at the same cost, the one with the most spare capacity (its tighter pool's).
    const auto spare = [](const Pair& x) { return std::min(d(x.pc) * x.p->rate, d(x.dc) * x.q->rate); };
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Pair& a, const Pair& b) {
        if (a.cost.cheaper_than(b.cost)) return true;
        if (b.cost.cheaper_than(a.cost)) return false;
        return spare(a) > spare(b);
    });
    constexpr std::size_t kMaxLayouts = 24;
    std::optional<Pair> best;
    for (const Pair& start : pairs) {
        if (best && !start.cost.cheaper_than(best->cost)) break;
        if (out.layouts_run >= kMaxLayouts) break;
        tick("disaggregated " + pool_label(*start.p->choice) + " + " + pool_label(*start.q->choice));
        Pair at = start;
        DisaggSpec spec;
        spec.prefill = {start.p->pricing.pricing, 1, start.p->choice->tp, scheme_name(start.p->choice->scheme), start.p->choice->request.gpu.id};
        spec.decode = {start.q->pricing.pricing, 1, start.q->choice->tp, scheme_name(start.q->choice->scheme), start.q->choice->request.gpu.id};
        spec.link = ask.link;
        spec.links = ask.links;
        spec.kv_bytes_per_token = kv_transfer_bytes_per_token(start.p->pricing.costs, start.q->choice->tp);
        spec.layers = std::max<std::int64_t>(start.p->choice->request.model.num_layers, 1);
        spec.layerwise = ask.connector.layerwise;
        spec.decode_frontend = ask.connector.decode_frontend;
        spec.transfer = ask.connector.transfer;
        spec.poll = [&] {
            if (ask.progress) ask.progress(std::min(1.0, done / units), "running a layout end to end");
        };
        for (int bump = 0; bump < 8 && at.cost.gpus <= ask.max_gpus && out.layouts_run < kMaxLayouts; ++bump) {
            if (best && !at.cost.cheaper_than(best->cost)) break;
            spec.prefill.instances = at.pc;
            spec.decode.instances = at.dc;
            const DisaggStats ds = run_disagg(ask.traffic, spec, ask.slo);
            ++out.layouts_run;
            const ServeStats& s = ds.end_to_end;
            if (holds(s)) {
                best = at;
                break;
            }
            // One more instance where the run misses: TTFT is the prefill pool's, TPOT the decode
            // pool's; a growing queue or both, the busier pool.
            const bool ttft_miss = ask.slo.ttft && s.ttft_s.at(ask.slo.ttft->quantile) > ask.slo.ttft->seconds;
            const bool tpot_miss = ask.slo.tpot && s.tpot_s.at(ask.slo.tpot->quantile) > ask.slo.tpot->seconds;
            const bool more_prefill = ttft_miss != tpot_miss ? ttft_miss : ds.prefill_utilization >= ds.decode_utilization;
            (more_prefill ? at.pc : at.dc) += 1;
            at.cost = pair_cost(*at.p, *at.q, at.pc, at.dc);
        }
    }
    if (best) {
        out.prefill = *best->p->choice;
        out.decode = *best->q->choice;
        out.prefill_instances = best->pc;
        out.decode_instances = best->dc;
        out.disaggregated_cost = best->cost;
        out.prefill_instance_rate = best->p->rate;
        out.decode_instance_rate = best->q->rate;
    }

    // Aggregated: replicas of each candidate, the cheapest that holds.
    struct Replicated {
        const Sized* a;
        std::int64_t replicas;
        LayoutCost cost;
    };
    std::vector<Replicated> reps;
    for (const Sized& a : agg) {
        const std::int64_t r = instances_for(rate, a.rate);
        const LayoutCost cost = cost_of(ask.prices, {{a.choice->request.gpu.id, r * a.choice->tp}});
        if (cost.gpus <= ask.max_gpus) reps.push_back({&a, r, cost});
    }
    std::stable_sort(reps.begin(), reps.end(), [](const Replicated& a, const Replicated& b) {
        if (a.cost.cheaper_than(b.cost)) return true;
        if (b.cost.cheaper_than(a.cost)) return false;
        return d(a.replicas) * a.a->rate > d(b.replicas) * b.a->rate;
    });
    std::optional<Replicated> best_agg;
    for (const Replicated& start : reps) {
        if (best_agg && !start.cost.cheaper_than(best_agg->cost)) break;
        tick("aggregated " + pool_label(*start.a->choice));
        Replicated at = start;
        for (int bump = 0; bump < 4 && at.cost.gpus <= ask.max_gpus; ++bump) {
            if (best_agg && !at.cost.cheaper_than(best_agg->cost)) break;
            if (holds(run_traffic(ask.traffic, at.a->pricing.pricing, ask.slo, rate / d(at.replicas)))) {
                best_agg = at;
                break;
            }
            at.replicas += 1;
            at.cost = cost_of(ask.prices, {{at.a->choice->request.gpu.id, at.replicas * at.a->choice->tp}});
        }
    }
    if (best_agg) {
        out.aggregated = *best_agg->a->choice;
        out.aggregated_replicas = best_agg->replicas;
        out.aggregated_cost = best_agg->cost;
        out.aggregated_replica_rate = best_agg->a->rate;
    }
    if (ask.progress) ask.progress(1.0, "done");
    return out;
}

nlohmann::json disagg_search_json(const DisaggSearch& s) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const SkippedChoice& k : s.skipped) skipped.push_back({{"role", k.role}, {"configuration", k.label}, {"reason", k.reason}});
    return {{"disaggregated", s.prefill ? nlohmann::json{{"prefill", choice_json(*s.prefill)},
                                                         {"decode", choice_json(*s.decode)},
                                                         {"prefill_instances", s.prefill_instances},
                                                         {"decode_instances", s.decode_instances},
                                                         {"gpus", s.disaggregated_cost.gpus},
                                                         {"usd_per_hour", s.disaggregated_cost.usd_per_hour ? nlohmann::json(*s.disaggregated_cost.usd_per_hour)
                                                                                                            : nlohmann::json(nullptr)},
                                                         {"prefill_instance_rate", s.prefill_instance_rate},
                                                         {"decode_instance_rate", s.decode_instance_rate}}
                                        : nlohmann::json(nullptr)},
            {"aggregated", s.aggregated ? nlohmann::json{{"configuration", choice_json(*s.aggregated)},
                                                         {"replicas", s.aggregated_replicas},
                                                         {"gpus", s.aggregated_cost.gpus},
                                                         {"usd_per_hour", s.aggregated_cost.usd_per_hour ? nlohmann::json(*s.aggregated_cost.usd_per_hour)
                                                                                                         : nlohmann::json(nullptr)},
                                                         {"replica_rate", s.aggregated_replica_rate}}
                                        : nlohmann::json(nullptr)},
            {"skipped", skipped},
            {"layouts_run", s.layouts_run}};
}

namespace {

// The search again with the found pools only, on a changed traffic or SLO.
SweepPoint sweep_point(const DisaggSearchAsk& base, const DisaggSearch& found, double x, const Traffic& traffic, const Slo& slo) {
    DisaggSearchAsk ask = base;
    ask.traffic = traffic;
    ask.slo = slo;
    ask.progress = nullptr;
    ask.prefill.clear();
    ask.decode.clear();
    ask.aggregated.clear();
    if (found.prefill) ask.prefill = {*found.prefill}, ask.decode = {*found.decode};
    if (found.aggregated) ask.aggregated = {*found.aggregated};
    SweepPoint p;
    p.x = x;
    DisaggSearch s;
    try {
        s = search_disagg(ask);
    } catch (const Error& e) {
        p.note = e.what();  // neither holds there, and why
    }
    if (s.prefill) p.disaggregated = s.disaggregated_cost, p.prefill_instances = s.prefill_instances, p.decode_instances = s.decode_instances;
    if (s.aggregated) p.aggregated = s.aggregated_cost, p.aggregated_replicas = s.aggregated_replicas;
    if (!p.disaggregated && !p.aggregated) p.winner = "none";
    else if (!p.aggregated) p.winner = "disaggregated";
    else if (!p.disaggregated) p.winner = "aggregated";
    else if (p.disaggregated->cheaper_than(*p.aggregated)) p.winner = "disaggregated";
    else if (p.aggregated->cheaper_than(*p.disaggregated)) p.winner = "aggregated";
    else p.winner = "neither";
    return p;
}

void finish_sweep(DisaggSweep& s, const std::string& what, const std::string& unit, int decimals, double scale) {
    // The first point from which disaggregation is cheaper at every later point where a layout
    // holds (a point where neither holds says nothing either way).
    std::optional<std::size_t> from;
    for (std::size_t i = s.points.size(); i-- > 0;) {
        if (s.points[i].winner == "none") continue;
        if (s.points[i].winner != "disaggregated") break;
        from = i;
    }
    std::string none;
    for (const SweepPoint& p : s.points)
        if (p.winner == "none") none += (none.empty() ? "" : ", ") + num(p.x * scale, decimals) + unit;
    if (from) s.crossover = s.points[*from].x;
    if (!from) s.summary = "disaggregation is not the cheaper at the last " + what + " swept where a layout holds";
    else if (*from == 0) s.summary = "disaggregation is the cheaper at every " + what + " swept";
    else s.summary = "disaggregation starts to pay at " + what + " " + num(s.points[*from].x * scale, decimals) + unit;
    if (!none.empty()) s.summary += " (neither layout holds at " + none + ")";
}

}  // namespace

DisaggSweep sweep_prompt_length(const DisaggSearchAsk& ask, const DisaggSearch& found, const std::vector<std::int64_t>& prompt_tokens) {
    DisaggSweep s;
    s.axis = "prompt_tokens";
    for (std::size_t i = 0; i < prompt_tokens.size(); ++i) {
        if (ask.progress) ask.progress(d(static_cast<std::int64_t>(i)) / d(static_cast<std::int64_t>(prompt_tokens.size())), "prompt length " + std::to_string(prompt_tokens[i]));
        Traffic t = ask.traffic;
        if (!t.rate_per_s) t.rate_per_s = offered_rate(t);  // a trace's own rate, its lengths replaced
        t.trace.clear();
        t.input = LengthSpec{LengthSpec::Kind::Fixed, d(prompt_tokens[i]), 0, {}, std::to_string(prompt_tokens[i])};
        s.points.push_back(sweep_point(ask, found, d(prompt_tokens[i]), t, ask.slo));
    }
    finish_sweep(s, "prompt length", " tokens", 0, 1.0);
    return s;
}

DisaggSweep sweep_tpot_slo(const DisaggSearchAsk& ask, const DisaggSearch& found, const std::vector<double>& tpot_slos) {
    DisaggSweep s;
    s.axis = "tpot_slo_s";
    for (std::size_t i = 0; i < tpot_slos.size(); ++i) {
        if (ask.progress) ask.progress(d(static_cast<std::int64_t>(i)) / d(static_cast<std::int64_t>(tpot_slos.size())), "TPOT SLO " + ms(tpot_slos[i]));
        Slo slo = ask.slo;
        slo.tpot = SloTarget{tpot_slos[i], ask.slo.tpot ? ask.slo.tpot->quantile : 0.99};
        s.points.push_back(sweep_point(ask, found, tpot_slos[i], ask.traffic, slo));
    }
    finish_sweep(s, "TPOT SLO", " ms", 1, 1e3);
    return s;
}

nlohmann::json disagg_sweep_json(const DisaggSweep& s) {
    nlohmann::json points = nlohmann::json::array();
    for (const SweepPoint& p : s.points)
        points.push_back({{s.axis, p.x},
                          {"disaggregated", p.disaggregated ? cost_json(*p.disaggregated) : nlohmann::json(nullptr)},
                          {"prefill_instances", p.prefill_instances},
                          {"decode_instances", p.decode_instances},
                          {"aggregated", p.aggregated ? cost_json(*p.aggregated) : nlohmann::json(nullptr)},
                          {"aggregated_replicas", p.aggregated_replicas},
                          {"winner", p.winner},
                          {"note", p.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.note)}});
    return {{"axis", s.axis}, {"points", points}, {"crossover", s.crossover ? nlohmann::json(*s.crossover) : nlohmann::json(nullptr)}, {"summary", s.summary}};
}

}  // namespace quantplan::serve
