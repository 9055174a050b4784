#include "core/serve/capacity_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/engine/step_model.h"
#include "core/roofline/decision.h"

#include <nlohmann/json.hpp>

namespace quantplan::serve {
namespace {

// Milliseconds to three decimals, for an error message.
std::string milliseconds(double seconds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
    return buf;
}

// A scheme admitted on the request's GPU and engine at TP `tp`, with max_model_len `longest`.
struct Priced {
    Admission admission;
    Workload w;
    SchemeCosts costs;
    std::optional<SpecPricing> spec;  // --spec: the draft and acceptance the simulator runs with
    const SpecPricing* spec_or_null() const { return spec ? &*spec : nullptr; }
};

Priced admit_at(const PlanRequest& request, const std::vector<TensorInfo>& inventory, const Scheme& scheme, std::int64_t tp, std::int64_t longest) {
    Priced p;
    p.w = request.workload;
    p.w.batch = 1;
    p.w.context_tokens = longest;  // the engine's max_model_len: the longest request of the traffic
    p.w.tensor_parallel = tp;
    if (p.w.expert_parallel > 1) p.w.expert_parallel = tp;  // experts follow the TP group
    p.costs = engine::costs_as_served(scheme_costs(request.model, inventory, scheme, scheme_kv_format(request.model, scheme, p.w, &*request.engine), request.gpu),
                                      request.model, request.engine->profile);
    if (request.spec) {
        // The draft's weights and cache, and K lookahead slots per sequence, in the budget.
        const SpecDraft d = spec_draft(request, p.costs, tp);
        p.w.engine.draft_weight_bytes_per_gpu = d.cost.weight_bytes;
        p.w.engine.draft_kv_bytes_per_token_per_gpu = d.cost.kv_bytes_per_token;
        const engine::SpecRequest& sr = request.spec->request;
        p.w.engine.lookahead_tokens = sr.k + engine::spec_lookahead_slots(request.engine->profile.engine, sr.method, sr.k);
        SpecPricing sp;
        sp.request = request.spec->request;
        sp.acceptance = request.spec->acceptance;
        sp.draft = d.cost;
        sp.terms = request.spec->terms;
        sp.draft_costs = d.draft_costs;
        sp.draft_model = request.spec->draft_model;
        sp.disable_above_batch = request.spec->disable_above_batch;
        p.spec = std::move(sp);
    }
    p.admission = engine::engine_admission(p.costs, request.model, request.gpu, *request.engine, p.w);
    // One request of the longest length must fit in the cache for the engine to start.
    if (p.admission.fits && p.admission.kv_cache_tokens < longest) {
        p.admission.fits = false;
        p.admission.reason =
            "its KV cache holds " + std::to_string(p.admission.kv_cache_tokens) + " tokens, below one request of " + std::to_string(longest);
    }
    return p;
}

// The acceptance draws' stream of the traffic's seed (apart from its lengths' and arrivals').
std::uint64_t spec_seed(const Traffic& t) { return t.seed * 0x9E3779B97F4A7C15ull + 0x5ec; }

// The smallest TP of 1, 2, 4, 8 (dividing the attention heads) at which the scheme fits.
std::optional<std::int64_t> smallest_tp(const PlanRequest& request, const std::vector<TensorInfo>& inventory, const Scheme& scheme,
                                        std::int64_t longest) {
    for (std::int64_t tp : {1, 2, 4, 8})
        if (request.model.num_attention_heads % tp == 0 && admit_at(request, inventory, scheme, tp, longest).admission.fits) return tp;
    return std::nullopt;
}

}  // namespace

std::int64_t longest_request(const Traffic& traffic) {
    if (traffic.trace.empty()) return max_length(traffic.input) + max_length(traffic.output);
    std::int64_t longest = 0;
    for (const Request& q : traffic.trace) longest = std::max(longest, q.input_tokens + q.output_tokens);
    return longest;
}

PoolPricing pool_pricing(const PlanRequest& request, const Scheme& scheme, std::int64_t tp, std::int64_t longest, const std::string& option) {
    if (tp < 1 || tp > 8 || request.model.num_attention_heads % tp != 0)
        throw Error(option, "TP " + std::to_string(tp) + " must be 1 to 8 and divide the " + std::to_string(request.model.num_attention_heads) +
                                " attention heads");
    const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(request.model));
    Priced p = admit_at(request, inventory, scheme, tp, longest);
    if (!p.admission.fits)
        throw Error(option, scheme_name(scheme) + " at TP " + std::to_string(tp) + " on " + request.gpu.id + ": " + p.admission.reason);
    PoolPricing out;
    out.pricing = engine_pricing(p.costs, request.model, request.gpu, *request.engine, p.w, p.admission, p.spec_or_null());
    out.admission = p.admission;
    out.costs = p.costs;
    return out;
}

CapacityPlan capacity_plan(const PlanRequest& request, const std::vector<PlanRequest>& candidates, const CapacityRequest& ask) {
    CapacityPlan out;
    const Traffic& traffic = ask.traffic;
    const Slo& slo = ask.slo;
    const std::optional<double>& target = ask.target_rate;
    const std::map<std::string, double>& prices = ask.prices;
    const ModelConfig& model = request.model;
    const GpuProfile& gpu = request.gpu;
    const engine::EngineSetup& setup = *request.engine;
    if (request.workload.data_parallel > 1 || request.workload.nodes > 1)
        throw Error(request.workload.data_parallel > 1 ? "--dp" : "--nodes",
                    "capacity planning sizes replicas of one tensor-parallel engine on one node; data-parallel attention and "
                    "multi-node placement are priced per step by the plan, not yet by the serving simulator");
    out.bands = setup.serving_bands;
    out.engine = setup.profile.engine;
    const std::int64_t longest = longest_request(traffic);
    if (model.max_position_embeddings > 0 && longest > model.max_position_embeddings)
        throw Error(traffic.trace.empty() ? "--isl" : "--trace", "input + output lengths reach " + std::to_string(longest) +
                                                                     " tokens, beyond the model's max_model_len " + std::to_string(model.max_position_embeddings));
    const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(model));
    const auto price = prices.find(gpu.id);
    std::vector<SchemeCapacity>& rows = out.schemes;
    // Progress: each scheme row one unit, and the ranking one per candidate GPU.
    const double units = static_cast<double>(request.schemes.size() + (target && ask.search ? candidates.size() : 0));
    double done = 0;
    const auto step = [&](const std::string& what) {
        if (ask.progress) ask.progress(units > 0 ? done / units : 1.0, what);
        done += 1;
    };
    for (const Scheme& scheme : request.schemes) {
        step(scheme_name(scheme) + " on " + gpu.id);
        SchemeCapacity row;
        row.name = scheme_name(scheme);
        row.fits_from_tp = smallest_tp(request, inventory, scheme, longest);
        Priced priced = admit_at(request, inventory, scheme, request.workload.tensor_parallel, longest);
        if (priced.spec) priced.spec->seed = spec_seed(traffic);
        const Workload& w = priced.w;
        const SchemeCosts& costs = priced.costs;
        const Admission& a = priced.admission;
        row.fits = a.fits;
        if (!a.fits) {
            row.reason = "does not fit at TP " + std::to_string(w.tensor_parallel) +
                         (row.fits_from_tp ? "; fits from TP " + std::to_string(*row.fits_from_tp) : "; fits at no TP up to 8");
            rows.push_back(row);
            continue;
        }
        const EnginePricing pricing = engine_pricing(costs, model, gpu, setup, w, a, priced.spec_or_null());
        for (const auto& [option, target_slo] : {std::pair{"--slo-ttft", slo.ttft}, std::pair{"--slo-tpot", slo.tpot}, std::pair{"--slo-e2e", slo.e2e}})
            if (target_slo && target_slo->seconds < pricing.fastest_step_s)
                throw Error(option, milliseconds(target_slo->seconds) + " is below the fastest possible step of " + row.name + " (" +
                                        milliseconds(pricing.fastest_step_s) + ")");
        const bool asked = traffic.rate_per_s || traffic.concurrency || !traffic.trace.empty() || traffic.arrival.kind == Arrival::Kind::Burst;
        if (!ask.search) {
            if (!asked) throw Error("--serve", "a run without the highest-rate search needs a rate, a concurrency, a trace or a burst");
            row.stats = run_traffic(traffic, pricing, slo, std::nullopt, ask.timeline_points);
            rows.push_back(row);
            continue;
        }
        {
            RateSearch found = sustained_rate_search(traffic, pricing, slo);
            row.max_rate = found.rate;
            row.binding = std::move(found.binding);
        }
        if (asked) row.stats = run_traffic(traffic, pricing, slo, std::nullopt, ask.timeline_points);
        std::optional<ServeStats> at_max;
        if (row.max_rate) at_max = run_traffic(traffic, pricing, slo, *row.max_rate, asked ? 0 : ask.timeline_points);
        if (!asked && at_max) row.stats = *at_max;
        if (!asked && !at_max) row.stats = run_traffic(traffic, pricing, slo, 0.0, ask.timeline_points);
        if (row.max_rate && !ask.sweep_fractions.empty()) {
            std::vector<double> rates;
            for (const double f : ask.sweep_fractions) rates.push_back(f * *row.max_rate);
            row.sweep = rate_sweep(traffic, pricing, slo, rates);
        }
        if (target && row.max_rate) {
            row.replicas = static_cast<std::int64_t>(std::ceil(*target / *row.max_rate - 1e-9));
            row.gpus = *row.replicas * w.tensor_parallel;
            row.headroom = static_cast<double>(*row.replicas) * *row.max_rate / *target - 1;
        }
        if (price != prices.end() && at_max && at_max->busy_s > 0) {
            // A replica's cost per second, split between input and output tokens by the GPU time
            // their prefill and decode took (idle time in proportion).
            const double per_s = price->second * static_cast<double>(w.tensor_parallel) / 3600.0;
            const double prefill_share = std::clamp(at_max->prefill_s / at_max->busy_s, 0.0, 1.0);
            if (at_max->output_tokens_per_s > 0) row.cost_output = per_s * (1 - prefill_share) / at_max->output_tokens_per_s * 1e6;
            if (at_max->input_tokens_per_s > 0) row.cost_input = per_s * prefill_share / at_max->input_tokens_per_s * 1e6;
        }
        rows.push_back(row);
    }

    // The ranked recommendation (with a target rate): every GPU given a price (and --gpu) x
    // scheme within the accuracy tolerance x its smallest TP and twice that, cheapest first.
    std::vector<Configuration>& ranked = out.ranked;
    std::vector<std::string>& vetoes = out.vetoes;
    if (target && ask.search) {
        double mean_output = 0;
        {
            const std::vector<Request> drawn = make_requests(traffic, 0.0);
            for (const Request& q : drawn) mean_output += static_cast<double>(q.output_tokens);
            mean_output /= static_cast<double>(drawn.size());
        }
        for (const Scheme& scheme : request.schemes)
            if (const std::optional<std::string> why = accuracy_veto(scheme, request.goal)) vetoes.push_back(scheme_name(scheme) + ": " + *why);
        for (const PlanRequest& rq : candidates) {
            step("ranking on " + rq.gpu.id);
            const std::string& id = rq.gpu.id;
            const auto usd = prices.find(id);
            for (const Scheme& scheme : request.schemes) {
                if (accuracy_veto(scheme, request.goal)) continue;
                const std::optional<std::int64_t> from = smallest_tp(rq, inventory, scheme, longest);
                if (!from) continue;
                for (const std::int64_t tp : {*from, *from * 2}) {
                    if (tp > 8 || model.num_attention_heads % tp != 0) continue;
                    Priced p = admit_at(rq, inventory, scheme, tp, longest);
                    if (p.spec) p.spec->seed = spec_seed(traffic);
                    if (!p.admission.fits) continue;
                    // The request's own GPU and TP was searched for its scheme row already.
                    const SchemeCapacity* row = nullptr;
                    for (const SchemeCapacity& r : out.schemes)
                        if (r.name == scheme_name(scheme) && r.fits) row = &r;
                    const bool searched = row != nullptr && id == gpu.id && tp == request.workload.tensor_parallel;
                    RateSearch found;
                    if (searched) found = {row->max_rate, row->binding.value_or(Binding{})};
                    else found = sustained_rate_search(traffic, engine_pricing(p.costs, model, rq.gpu, *rq.engine, p.w, p.admission, p.spec_or_null()), slo);
                    const std::optional<double>& rate = found.rate;
                    if (!rate) continue;
                    Configuration c;
                    c.binding = found.binding;
                    c.gpu = id;
                    c.scheme = scheme_name(scheme);
                    c.tp = tp;
                    c.max_rate = *rate;
                    c.replicas = static_cast<std::int64_t>(std::ceil(*target / *rate - 1e-9));
                    c.gpus = c.replicas * tp;
                    c.headroom = static_cast<double>(c.replicas) * c.max_rate / *target - 1;
                    if (usd != prices.end()) {
                        c.usd_per_hour = usd->second * static_cast<double>(c.gpus);
                        if (mean_output > 0) c.cost_output = *c.usd_per_hour * 1e6 / (3600.0 * *target * mean_output);
                    }
                    ranked.push_back(c);
                }
            }
        }
        std::stable_sort(ranked.begin(), ranked.end(), [](const Configuration& a, const Configuration& b) {
            if (a.usd_per_hour.has_value() != b.usd_per_hour.has_value()) return a.usd_per_hour.has_value();
            if (a.usd_per_hour && *a.usd_per_hour != *b.usd_per_hour) return *a.usd_per_hour < *b.usd_per_hour;
            if (a.gpus != b.gpus) return a.gpus < b.gpus;
            return a.max_rate > b.max_rate;
        });
    }
    if (ask.progress) ask.progress(1.0, "capacity planning done");
    return out;
}

namespace {

nlohmann::json percentiles_json(const Percentiles& p) { return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}}; }

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// JSON of figure_band; null without a band.
nlohmann::json band_json(const CapacityPlan& plan, const std::string& figure, const std::optional<double>& predicted) {
    const std::optional<FigureBand> b = predicted ? figure_band(plan, figure, *predicted) : std::nullopt;
    if (!b) return nullptr;
    return {{"low", b->low}, {"high", b->high}, {"p10_error", b->band.p10}, {"p90_error", b->band.p90}, {"points", b->band.points}, {"basis", b->band.basis}};
}

}  // namespace

std::optional<FigureBand> figure_band(const CapacityPlan& plan, const std::string& figure, double predicted) {
    const engine::ServingBand* b = engine::find_serving_band(plan.bands, plan.engine, figure);
    if (!b) return std::nullopt;
    // A p10 below -95% would put the high end at infinity: held at 1 / 0.05 = 20 x the prediction.
    return FigureBand{predicted / (1 + b->p90), predicted / std::max(1 + b->p10, 0.05), *b};
}

nlohmann::json serve_json(const CapacityPlan& plan) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SchemeCapacity& r : plan.schemes) {
        nlohmann::json j = {{"name", r.name}, {"fits", r.fits}, {"fits_from_tp", opt(r.fits_from_tp)}};
        if (!r.fits) {
            j["reason"] = r.reason;
            j["overloaded"] = false;
            for (const char* k : {"ttft_s", "tpot_s", "itl_s", "e2e_s", "queue_s", "output_tokens_per_s", "input_tokens_per_s", "requests_per_s",
                                  "goodput_requests_per_s", "slo_attainment", "preemptions", "kv_utilization_mean", "max_rate_requests_per_s",
                                  "replicas_needed", "gpus_needed", "headroom_fraction", "cost_per_million_output_tokens",
                                  "cost_per_million_input_tokens", "ttft_s_band", "tpot_s_band", "requests_per_s_band",
                                  "max_rate_requests_per_s_band", "binding", "binding_detail", "sequences_in_cache",
                                  "offered_requests_per_s", "completed_requests_per_s"})
                j[k] = nullptr;
            arr.push_back(j);
            continue;
        }
        const ServeStats& s = r.stats;
        // An overloaded run's latencies grow with its length: no figures, only what it completes.
        j["overloaded"] = s.overloaded;
        j["offered_requests_per_s"] = s.offered_requests_per_s > 0 ? nlohmann::json(s.offered_requests_per_s) : nlohmann::json(nullptr);
        j["completed_requests_per_s"] = s.offered_requests_per_s > 0 ? nlohmann::json(s.completed_requests_per_s) : nlohmann::json(nullptr);
        const auto latency = [&](const Percentiles& p) { return s.overloaded ? nlohmann::json(nullptr) : percentiles_json(p); };
        j["ttft_s"] = latency(s.ttft_s);
        j["tpot_s"] = latency(s.tpot_s);
        j["itl_s"] = latency(s.itl_s);
        j["e2e_s"] = latency(s.e2e_s);
        j["queue_s"] = latency(s.queue_s);
        j["binding"] = r.binding ? nlohmann::json(r.binding->constraint) : nlohmann::json(nullptr);
        j["binding_detail"] = r.binding ? nlohmann::json(r.binding->detail) : nlohmann::json(nullptr);
        j["sequences_in_cache"] = r.binding ? nlohmann::json(r.binding->sequences_in_cache) : nlohmann::json(nullptr);
        j["output_tokens_per_s"] = s.output_tokens_per_s;
        j["input_tokens_per_s"] = s.input_tokens_per_s;
        j["requests_per_s"] = s.requests_per_s;
        j["goodput_requests_per_s"] = s.goodput_requests_per_s;
        j["slo_attainment"] = s.slo_attainment;
        j["preemptions"] = s.preemptions;
        j["kv_utilization_mean"] = s.kv_utilization_mean;
        j["mean_batch"] = s.mean_batch;
        j["prefix_hit_tokens"] = s.prefix_hit_tokens;
        j["gpu_time_s"] = {{"prefill", s.prefill_s}, {"decode", s.busy_s - s.prefill_s}, {"idle", std::max(0.0, s.span_s - s.busy_s)}};
        j["max_rate_requests_per_s"] = opt(r.max_rate);
        // Bands (the serving fit's leave-one-source-out residuals): TTFT and TPOT at their p50.
        j["ttft_s_band"] = s.overloaded ? nlohmann::json(nullptr) : band_json(plan, "ttft_s", s.ttft_s.p50);
        j["tpot_s_band"] = s.overloaded ? nlohmann::json(nullptr) : band_json(plan, "tpot_s", s.tpot_s.p50);
        j["requests_per_s_band"] = band_json(plan, "requests_per_s", s.requests_per_s);
        j["max_rate_requests_per_s_band"] = band_json(plan, "requests_per_s", r.max_rate);
        j["replicas_needed"] = opt(r.replicas);
        j["gpus_needed"] = opt(r.gpus);
        j["headroom_fraction"] = opt(r.headroom);
        j["cost_per_million_output_tokens"] = opt(r.cost_output);
        j["cost_per_million_input_tokens"] = opt(r.cost_input);
        // The run over time, column by column (the timeline view).
        nlohmann::json tl = {{"t_s", nlohmann::json::array()}, {"batch", nlohmann::json::array()}, {"queue", nlohmann::json::array()},
                             {"kv_utilization", nlohmann::json::array()}, {"preemptions", nlohmann::json::array()}};
        if (s.speculative) tl["tokens_per_sequence"] = tl["acceptance"] = nlohmann::json::array();
        for (const TimelinePoint& p : s.timeline) {
            tl["t_s"].push_back(p.t_s);
            tl["batch"].push_back(p.running);
            tl["queue"].push_back(p.waiting);
            tl["kv_utilization"].push_back(p.kv_utilization);
            tl["preemptions"].push_back(p.preemptions);
            if (s.speculative) {
                // A point whose step decoded nothing (a prefill-only step, idle) has no speculation.
                tl["tokens_per_sequence"].push_back(p.tokens_per_sequence > 0 ? nlohmann::json(p.tokens_per_sequence) : nlohmann::json(nullptr));
                tl["acceptance"].push_back(p.tokens_per_sequence > 0 ? nlohmann::json(p.acceptance) : nlohmann::json(nullptr));
            }
        }
        // Speculative decoding as the run realised it: the tokens a decoding sequence gained per
        // step and the share of speculative tokens accepted.
        if (s.speculative)
            j["speculation"] = {{"tokens_per_decode_step", s.spec_tokens_per_step},
                                {"acceptance_rate", s.spec_acceptance_rate},
                                {"speculative_tokens", s.spec_tokens},
                                {"accepted_tokens", s.spec_accepted}};
        j["timeline"] = tl;
        // Latency against rate around the highest rate (the report's and window's charts).
        nlohmann::json sweep = nlohmann::json::array();
        for (const RatePoint& p : r.sweep)
            sweep.push_back({{"rate_requests_per_s", p.rate_per_s}, {"ttft_s", percentiles_json(p.ttft_s)}, {"tpot_s", percentiles_json(p.tpot_s)},
                             {"e2e_s", percentiles_json(p.e2e_s)}, {"goodput_requests_per_s", p.goodput_requests_per_s},
                             {"meets_slo", p.meets_slo}, {"stable", p.stable}});
        j["rate_sweep"] = sweep;
        arr.push_back(j);
    }
    return arr;
}

nlohmann::json recommendation_json(const CapacityPlan& plan, const std::optional<double>& target) {
    nlohmann::json rec = nlohmann::json::array();
    for (const Configuration& c : plan.ranked)
        rec.push_back({{"gpu", c.gpu}, {"tp", c.tp}, {"scheme", c.scheme}, {"replicas", c.replicas}, {"gpus", c.gpus},
                       {"max_rate_requests_per_s", c.max_rate}, {"headroom_fraction", c.headroom}, {"usd_per_hour", opt(c.usd_per_hour)},
                       {"cost_per_million_output_tokens", opt(c.cost_output)}, {"binding", c.binding.constraint},
                       {"binding_detail", c.binding.detail}, {"sequences_in_cache", c.binding.sequences_in_cache}});
    return target ? nlohmann::json{{"target_rate_requests_per_s", *target}, {"ranked", rec}, {"vetoed", plan.vetoes}} : nlohmann::json(nullptr);
}

}  // namespace quantplan::serve
