// --serve --disagg P:D: disaggregated prefill and decode beside aggregated serving on the same GPU
// budget (core/serve/disagg.h, docs/disaggregation.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "app/scenario.h"
#include "app/text_table.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/disagg.h"

namespace quantplan::app {
namespace {

std::string ms(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
    return buf;
}

nlohmann::json pct_json(const serve::Percentiles& p) { return {{"mean", p.mean}, {"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}}; }

nlohmann::json stats_json(const serve::ServeStats& s) {
    return {{"ttft_s", pct_json(s.ttft_s)},           {"tpot_s", pct_json(s.tpot_s)},        {"itl_s", pct_json(s.itl_s)},
            {"e2e_s", pct_json(s.e2e_s)},             {"requests_per_s", s.requests_per_s},  {"output_tokens_per_s", s.output_tokens_per_s},
            {"slo_attainment", s.slo_attainment},     {"goodput_requests_per_s", s.goodput_requests_per_s},
            {"preemptions", s.preemptions},           {"overloaded", s.overloaded}};
}

}  // namespace

int run_disagg(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        CliOptions o = given;
        if (o.scenario) apply_scenario_file(o, *o.scenario);
        o.profile = "engine";
        const bool search = *o.disagg == "auto";
        std::int64_t p_count = 1, d_count = 1;
        if (!search) std::tie(p_count, d_count) = serve::parse_disagg(*o.disagg);
        serve::Traffic traffic;
        serve::Slo slo;
        serve_inputs(o, traffic, slo);
        if (!o.rate && traffic.trace.empty())
            throw Error("--disagg", "needs an open-loop traffic (--rate, or a trace): a closed loop's users wait on the decode pool's answers");
        const std::int64_t longest = serve::longest_request(traffic);
        o.context = longest;
        o.batch = 1;
        // Each pool's request: its GPU and TP; the model and engine are the run's (one --model: the
        // two pools serve the same model).
        const auto pool_request = [&](const std::optional<std::string>& gpu, const std::optional<std::int64_t>& tp, const char* option) {
            CliOptions po = o;
            if (gpu) po.gpu = *gpu;
            if (tp) po.tp = *tp;
            try {
                return plan_request_from_options(po);
            } catch (const Error& e) {
                throw Error(option, e.what());
            }
        };
        const PlanRequest base = pool_request(std::nullopt, std::nullopt, "--gpu");
        const PlanRequest prefill_rq = pool_request(o.prefill_gpu, o.prefill_tp, "--prefill-gpu");
        const PlanRequest decode_rq = pool_request(o.decode_gpu, o.decode_tp, "--decode-gpu");
        const std::string first_scheme = base.schemes.empty() ? std::string("bf16") : scheme_name(base.schemes.front());
        const Scheme prefill_scheme = parse_scheme(o.prefill_scheme.value_or(first_scheme));
        const Scheme decode_scheme = parse_scheme(o.decode_scheme.value_or(first_scheme));
        const std::int64_t ptp = o.prefill_tp.value_or(o.tp), dtp = o.decode_tp.value_or(o.tp);
        const serve::PoolPricing pp = serve::pool_pricing(prefill_rq, prefill_scheme, ptp, longest, "--prefill-tp");
        const serve::PoolPricing dp = serve::pool_pricing(decode_rq, decode_scheme, dtp, longest, "--decode-tp");
        const std::string link_id = o.interconnect.value_or("infiniband-ndr");
        serve::DisaggSpec spec;
        spec.prefill = {pp.pricing, p_count, ptp, scheme_name(prefill_scheme), prefill_rq.gpu.id};
        spec.decode = {dp.pricing, d_count, dtp, scheme_name(decode_scheme), decode_rq.gpu.id};
        spec.link = serve::resolve_interconnect(link_id, interconnects_dir());
        spec.kv_bytes_per_token = static_cast<double>(pp.costs.kv_bytes_per_token);
        spec.layers = std::max<std::int64_t>(base.model.num_layers, 1);
        const std::int64_t agg_tp = o.tp;
        const double offered = o.rate.value_or(serve::trace_rate(traffic.trace));
        std::optional<serve::PoolPricing> ap;
        std::string agg_refused;
        try {
            ap = serve::pool_pricing(base, decode_scheme, agg_tp, longest, "--tp");
        } catch (const Error& e) {
            agg_refused = e.what();
        }
        // A layout holds when its queue does not grow and every SLO is met at the offered rate.
        const auto holds = [](const serve::ServeStats& s) { return !s.overloaded && s.meets_slo; };
        // --disagg auto: the fewest GPUs of P:D (each up to 8 instances) that hold, and the fewest
        // aggregated replicas that hold (up to kMaxSearchGpus GPUs each way).
        constexpr std::int64_t kMaxSearchGpus = 32;
        nlohmann::json search_json = nullptr;
        if (search) {
            std::optional<std::pair<std::int64_t, std::int64_t>> found;
            for (std::int64_t g = ptp + dtp; g <= kMaxSearchGpus && !found; ++g)
                for (std::int64_t pc = 1; pc <= 8 && !found; ++pc) {
                    if ((g - pc * ptp) <= 0 || (g - pc * ptp) % dtp != 0) continue;
                    const std::int64_t dc = (g - pc * ptp) / dtp;
                    if (dc < 1 || dc > 8) continue;
                    serve::DisaggSpec trial = spec;
                    trial.prefill.instances = pc;
                    trial.decode.instances = dc;
                    if (holds(serve::run_disagg(traffic, trial, slo).end_to_end)) found = std::pair{pc, dc};
                }
            std::optional<std::int64_t> agg_found;
            if (ap)
                for (std::int64_t r = 1; r * agg_tp <= kMaxSearchGpus && !agg_found; ++r)
                    if (holds(serve::run_traffic(traffic, ap->pricing, slo, offered / static_cast<double>(r)))) agg_found = r;
            if (!found)
                throw Error("--disagg", "no P:D up to 8 instances each and " + std::to_string(kMaxSearchGpus) + " GPUs holds " + fixed(offered, 2) +
                                            " requests/s within the SLOs" + (agg_found ? "; aggregated needs " + std::to_string(*agg_found * agg_tp) + " GPUs" : std::string()));
            p_count = found->first;
            d_count = found->second;
            spec.prefill.instances = p_count;
            spec.decode.instances = d_count;
            search_json = {{"disaggregated", {{"prefill_instances", p_count}, {"decode_instances", d_count}, {"gpus", p_count * ptp + d_count * dtp}}},
                           {"aggregated", agg_found ? nlohmann::json{{"replicas", *agg_found}, {"gpus", *agg_found * agg_tp}} : nlohmann::json(nullptr)},
                           {"max_gpus", kMaxSearchGpus}};
        }
        const serve::DisaggStats ds = serve::run_disagg(traffic, spec, slo);

        // Aggregated serving on the same GPUs: replicas of the decode scheme at --tp, the rate split.
        const std::int64_t gpus = p_count * ptp + d_count * dtp;
        const std::int64_t replicas = std::max<std::int64_t>(1, gpus / agg_tp);
        std::optional<serve::ServeStats> agg;
        if (ap) agg = serve::run_traffic(traffic, ap->pricing, slo, offered / static_cast<double>(replicas));
        // Which wins, and what binds.
        const serve::ServeStats& dis = ds.end_to_end;
        std::string bound;
        if (ds.link_utilization > 0.7 || ds.transfer_s.p90 > 0.5 * std::max(dis.ttft_s.p50, 1e-9))
            bound = "transfer bandwidth: the KV transfer takes " + ms(ds.transfer_s.p90) + " at p90 (" + spec.link.name + ", links busy " +
                    fixed(ds.link_utilization * 100, 0) + "%)";
        else if (dis.preemptions > 0 || ds.decode_kv_utilization > 0.9)
            bound = "decode KV capacity: the decode pool " + std::string(dis.preemptions > 0 ? "preempts " + std::to_string(dis.preemptions) + " requests"
                                                                                                : "fills " + fixed(ds.decode_kv_utilization * 100, 0) + "% of its KV cache on average");
        else if (agg && agg->tpot_s.p50 > 1.1 * dis.tpot_s.p50)
            bound = "prefill interference: aggregated decode steps carry prefill chunks (TPOT p50 " + ms(agg->tpot_s.p50) + " against " +
                    ms(dis.tpot_s.p50) + " on a decode pool)";
        else
            bound = "neither pool saturates at this rate; the transfer and the idle share of each pool are the cost of splitting";
        std::string winner;
        if (!agg) winner = "disaggregated (aggregated serving does not fit: " + agg_refused + ")";
        else {
            // Within the SLOs first (attainment a point apart), then the E2E median (2% apart).
            const double a_dis = dis.slo_attainment, a_agg = agg->slo_attainment;
            if (slo.any() && std::abs(a_dis - a_agg) > 0.01) {
                winner = std::string(a_dis > a_agg ? "disaggregated" : "aggregated") + " by SLO attainment (" + fixed(a_dis * 100, 1) + "% against " +
                         fixed(a_agg * 100, 1) + "%)";
            } else {
                const double e_dis = dis.e2e_s.p50, e_agg = agg->e2e_s.p50;
                winner = e_dis < e_agg * 0.98 ? "disaggregated" : e_agg < e_dis * 0.98 ? "aggregated" : "neither (within 2%)";
                winner += " by E2E p50 (" + ms(e_dis) + " against " + ms(e_agg) + (slo.any() ? ", both at the same SLO attainment)" : ")");
            }
        }
        nlohmann::json doc = {
            {"disagg",
             {{"pools",
               {{"prefill", {{"instances", p_count}, {"tp", ptp}, {"scheme", spec.prefill.scheme}, {"gpu", spec.prefill.gpu}, {"utilization", ds.prefill_utilization},
                             {"littles_law", {{"mean_in_system", ds.prefill_mean_in_system}, {"throughput_times_latency", ds.prefill_throughput_times_latency}}}}},
                {"decode", {{"instances", d_count}, {"tp", dtp}, {"scheme", spec.decode.scheme}, {"gpu", spec.decode.gpu}, {"utilization", ds.decode_utilization},
                            {"kv_utilization", ds.decode_kv_utilization},
                            {"littles_law", {{"mean_in_system", ds.decode_mean_in_system}, {"throughput_times_latency", ds.decode_throughput_times_latency}}}}}}},
              {"interconnect", {{"id", spec.link.id}, {"name", spec.link.name}, {"bandwidth_bytes_per_s", spec.link.bandwidth_bytes_per_s},
                                {"latency_s", spec.link.latency_s}, {"source", spec.link.source}}},
              {"kv_bytes_per_token", spec.kv_bytes_per_token},
              {"layerwise", spec.layerwise},
              {"transfer_s", pct_json(ds.transfer_s)},
              {"transfer_wait_s", pct_json(ds.transfer_wait_s)},
              {"link_utilization", ds.link_utilization},
              {"gpus", gpus},
              {"end_to_end", stats_json(dis)},
              {"littles_law", {{"mean_in_system", ds.end_mean_in_system}, {"throughput_times_latency", ds.end_throughput_times_latency}}},
              {"aggregated", agg ? nlohmann::json{{"replicas", replicas}, {"tp", agg_tp}, {"scheme", spec.decode.scheme}, {"per_replica", stats_json(*agg)},
                                                  {"requests_per_s", agg->requests_per_s * static_cast<double>(replicas)}}
                                 : nlohmann::json{{"refused", agg_refused}}},
              {"winner", winner},
              {"bound", bound},
              {"search", search_json}}}};
        if (o.json_path) return write_json_text(doc.dump(2) + "\n", *o.json_path, out, err);
        out << base.model.name << ": disaggregated " << p_count << " prefill x TP " << ptp << " (" << spec.prefill.scheme << ", " << spec.prefill.gpu << ") + " << d_count
            << " decode x TP " << dtp << " (" << spec.decode.scheme << ", " << spec.decode.gpu << "), KV over " << spec.link.name
            << (o.interconnect ? "" : " (the default; --interconnect)") << ", " << gpus << " GPUs\n";
        out << "traffic: " << traffic.requests << " requests at " << fixed(o.rate.value_or(0), 2) << " requests/s, input " << o.isl << ", output " << o.osl << "\n\n";
        TextTable table({"serving", "GPUs", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "req/s", "SLO %", "KV transfer p50/p99", "busy P / D / link"},
                        {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                         TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right});
        const auto row = [&](const std::string& name, std::int64_t g, const serve::ServeStats& s, double rps, const std::string& transfer, const std::string& busy) {
            if (s.overloaded) {
                table.add_row({name, std::to_string(g), "-", "-", "-", "-", "-", "-", transfer, busy},
                              "overloaded: completes " + fixed(s.completed_requests_per_s, 2) + " of " + fixed(s.offered_requests_per_s, 2) + " requests/s offered");
                return;
            }
            table.add_row({name, std::to_string(g), ms(s.ttft_s.p50), ms(s.ttft_s.p99), ms(s.tpot_s.p50), ms(s.tpot_s.p99), fixed(rps, 2),
                           fixed(s.slo_attainment * 100, 1), transfer, busy});
        };
        row("disaggregated " + std::to_string(p_count) + "P:" + std::to_string(d_count) + "D", gpus, dis, dis.requests_per_s,
            ms(ds.transfer_s.p50) + " / " + ms(ds.transfer_s.p99),
            fixed(ds.prefill_utilization * 100, 0) + "% / " + fixed(ds.decode_utilization * 100, 0) + "% / " + fixed(ds.link_utilization * 100, 0) + "%");
        if (agg) row("aggregated " + std::to_string(replicas) + " x TP " + std::to_string(agg_tp), replicas * agg_tp, *agg,
                     agg->requests_per_s * static_cast<double>(replicas), "-", "-");
        else table.add_row({"aggregated"}, agg_refused);
        table.print(out);
        if (search)
            out << "\nsearch (--disagg auto): the fewest GPUs that hold " << fixed(offered, 2) << " requests/s" << (slo.any() ? " within the SLOs" : " without a growing queue")
                << ": disaggregated " << p_count << "P:" << d_count << "D on " << gpus << " GPUs; aggregated "
                << (search_json["aggregated"].is_null() ? std::string("none up to " + std::to_string(kMaxSearchGpus) + " GPUs")
                                                        : std::to_string(search_json["aggregated"]["replicas"].get<std::int64_t>()) + " x TP " + std::to_string(agg_tp) + " on " +
                                                              std::to_string(search_json["aggregated"]["gpus"].get<std::int64_t>()) + " GPUs")
                << "\n";
        out << "\nwinner: " << winner << "\nbound: " << bound << "\n";
        out << "Little's law, end to end: " << fixed(ds.end_mean_in_system, 2) << " requests in the system against throughput x latency "
            << fixed(ds.end_throughput_times_latency, 2) << "\n";
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
