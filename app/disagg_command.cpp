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
#include "core/serve/disagg_plan.h"

namespace quantplan::app {
namespace {

std::string ms(double s) { return fixed(s * 1e3, 1) + " ms"; }

constexpr std::int64_t kMaxSearchGpus = 64;  // --disagg auto: neither answer uses more

}  // namespace

DisaggRun compute_disagg(const CliOptions& given, const std::map<std::string, serve::TransferTerms>* transfer_fit) {
    // Every PD connector modelled is vLLM V1's, Dynamo's or SGLang's: none runs V0's multi-step.
    if (given.num_scheduler_steps) throw Error("--num-scheduler-steps", "vLLM V0's multi-step scheduling has no disaggregated serving here (the connectors modelled are V1's and SGLang's)");
    DisaggRun run;
    CliOptions& o = run.options;
    o = given;
    if (o.scenario) apply_scenario_file(o, *o.scenario);
    o.profile = "engine";
    const bool search = *o.disagg == "auto";
    std::int64_t p_count = 1, d_count = 1;
    if (!search) std::tie(p_count, d_count) = serve::parse_disagg(*o.disagg);
    serve::Traffic& traffic = run.traffic;
    serve::Slo& slo = run.slo;
    serve_inputs(o, traffic, slo);
    if (!o.rate && traffic.trace.empty() && (search || o.disagg_sweep))
        throw Error(search ? "--disagg" : "--disagg-sweep", "the search and the sweeps size pools for a rate: give --rate (or a trace), not --concurrency");
    const std::int64_t longest = serve::longest_request(traffic);
    o.context = longest;
    o.batch = 1;
    // Each pool's request: its GPU; the model and engine are the run's (one --model: the two
    // pools serve the same model). Requests are built once per GPU.
    std::map<std::string, PlanRequest> by_gpu;
    const auto request_on = [&](const std::string& gpu, const char* option) -> const PlanRequest& {
        if (const auto it = by_gpu.find(gpu); it != by_gpu.end()) return it->second;
        CliOptions po = o;
        po.gpu = gpu;
        try {
            return by_gpu.emplace(gpu, plan_request_from_options(po)).first->second;
        } catch (const Error& e) {
            throw Error(option, e.what());
        }
    };
    const PlanRequest& base = request_on(o.gpu, "--gpu");
    const std::string first_scheme = base.schemes.empty() ? std::string("bf16") : scheme_name(base.schemes.front());
    const auto choice = [&](const std::optional<std::string>& gpu, const std::optional<std::int64_t>& tp, const std::optional<std::string>& scheme,
                            const char* gpu_option) {
        return serve::PoolChoice{request_on(gpu.value_or(o.gpu), gpu_option), parse_scheme(scheme.value_or(first_scheme)), tp.value_or(o.tp)};
    };
    serve::DisaggAsk ask;
    ask.prefill = choice(o.prefill_gpu, o.prefill_tp, o.prefill_scheme, "--prefill-gpu");
    ask.decode = choice(o.decode_gpu, o.decode_tp, o.decode_scheme, "--decode-gpu");
    ask.aggregated = serve::PoolChoice{base, ask.decode.scheme, o.tp};
    ask.link = serve::resolve_interconnect(o.interconnect.value_or("infiniband-ndr"), interconnects_dir());
    if (o.interconnect_links) {
        if (*o.interconnect_links < 1 || *o.interconnect_links > 64) throw Error("--interconnect-links", "must be 1 to 64 links");
        ask.links = *o.interconnect_links;
    }
    ask.connector = serve::resolve_connector(o.kv_connector.value_or(""), base.engine ? base.engine->profile.engine : std::string("vllm"));
    serve::apply_transfer_fit(ask.connector, transfer_fit ? *transfer_fit : serve::load_transfer_fit(kv_transfer_fit_file()));
    ask.traffic = traffic;
    ask.slo = slo;
    ask.prefill_instances = p_count;
    ask.decode_instances = d_count;

    // The search's candidates: TP 1, 2, 4, 8, each scheme of --schemes and each GPU of --gpu and
    // --compare-gpus per pool, unless a pool option pins it.
    std::map<std::string, double> prices;
    std::map<std::string, std::string> price_sources;
    serve::DisaggSearchAsk sask;
    std::optional<serve::DisaggSearch>& found = run.found;
    if (search || o.disagg_sweep) {
        const std::map<std::string, double> given_prices = serving_prices(o, prices, price_sources);
        std::vector<std::string> gpus = {o.gpu};
        if (search)
            for (const auto& [id, option] : compared_gpus(o, given_prices, prices))
                if (std::find(gpus.begin(), gpus.end(), id) == gpus.end()) {
                    (void)request_on(id, option.c_str());
                    gpus.push_back(id);
                }
        std::vector<Scheme> schemes = base.schemes;
        if (schemes.empty()) schemes.push_back(parse_scheme(first_scheme));
        const auto candidates = [&](const std::optional<std::string>& gpu, const std::optional<std::int64_t>& tp, const std::optional<std::string>& scheme,
                                    const char* gpu_option) {
            std::vector<serve::PoolChoice> out;
            const std::vector<std::string> g = gpu ? std::vector<std::string>{*gpu} : gpus;
            const std::vector<std::int64_t> t = tp ? std::vector<std::int64_t>{*tp} : std::vector<std::int64_t>{1, 2, 4, 8};
            std::vector<Scheme> s = schemes;
            if (scheme) s = {parse_scheme(*scheme)};
            for (const std::string& id : g)
                for (const Scheme& sc : s)
                    for (const std::int64_t k : t) out.push_back({request_on(id, gpu_option), sc, k});
            return out;
        };
        if (search) {
            sask.prefill = candidates(o.prefill_gpu, o.prefill_tp, o.prefill_scheme, "--prefill-gpu");
            sask.decode = candidates(o.decode_gpu, o.decode_tp, o.decode_scheme, "--decode-gpu");
            sask.aggregated = candidates(std::nullopt, std::nullopt, std::nullopt, "--gpu");
        } else {
            sask.prefill = {ask.prefill};
            sask.decode = {ask.decode};
            sask.aggregated = {ask.aggregated};
        }
        sask.link = ask.link;
        sask.links = ask.links;
        sask.connector = ask.connector;
        sask.traffic = traffic;
        sask.slo = slo;
        sask.prices = prices;
        sask.max_gpus = kMaxSearchGpus;
    }
    if (search) {
        found = serve::search_disagg(sask);
        if (!found->prefill)
            throw Error("--disagg", "no P:D of the candidates holds " + fixed(serve::trace_rate(traffic.trace) > 0 && !o.rate ? serve::trace_rate(traffic.trace) : o.rate.value_or(0), 2) +
                                        " requests/s " + (slo.any() ? "within the SLOs " : "") + "on up to " + std::to_string(kMaxSearchGpus) + " GPUs" +
                                        (found->aggregated ? "; aggregated needs " + std::to_string(found->aggregated_cost.gpus) + " GPUs" : std::string()));
        ask.prefill = *found->prefill;
        ask.decode = *found->decode;
        ask.prefill_instances = p_count = found->prefill_instances;
        ask.decode_instances = d_count = found->decode_instances;
        if (found->aggregated) ask.aggregated = *found->aggregated;
    } else if (o.disagg_sweep) {
        // The sweeps size the given pools: the layout as given is the "found" one.
        found = serve::DisaggSearch{};
        found->prefill = ask.prefill;
        found->decode = ask.decode;
        found->aggregated = ask.aggregated;
    }
    run.comparison = serve::compare_disagg(ask);
    const serve::DisaggComparison& c = run.comparison;
    nlohmann::json& disagg = run.json;
    disagg = serve::disagg_json(c);
    disagg["search"] = nullptr;
    if (search) {
        disagg["search"] = serve::disagg_search_json(*found);
        disagg["search"]["max_gpus"] = kMaxSearchGpus;
    }
    std::optional<serve::DisaggSweep>&by_prompt = run.by_prompt, &by_tpot = run.by_tpot;
    disagg["sweeps"] = nullptr;
    if (o.disagg_sweep) {
        std::vector<std::int64_t> lengths;
        std::int64_t osl_max = serve::max_length(traffic.output);
        for (const serve::Request& q : traffic.trace) osl_max = std::max(osl_max, q.output_tokens);
        for (std::int64_t n = 256; n <= 32768; n *= 2)
            if (base.model.max_position_embeddings <= 0 || n + osl_max <= base.model.max_position_embeddings) lengths.push_back(n);
        by_prompt = serve::sweep_prompt_length(sask, *found, lengths);
        by_tpot = serve::sweep_tpot_slo(sask, *found, {0.2, 0.1, 0.07, 0.05, 0.035, 0.025, 0.02, 0.015});
        disagg["sweeps"] = {{"prompt_length", serve::disagg_sweep_json(*by_prompt)}, {"tpot_slo", serve::disagg_sweep_json(*by_tpot)}};
    }
    run.model_name = base.model.name;
    run.offered = o.rate.value_or(serve::trace_rate(traffic.trace));
    return run;
}

int run_disagg(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        const DisaggRun run = compute_disagg(given);
        const CliOptions& o = run.options;
        const serve::Traffic& traffic = run.traffic;
        const serve::Slo& slo = run.slo;
        const serve::DisaggComparison& c = run.comparison;
        const std::optional<serve::DisaggSweep>&by_prompt = run.by_prompt, &by_tpot = run.by_tpot;
        const bool search = run.found && *o.disagg == "auto";
        const std::optional<serve::DisaggSearch>& found = run.found;
        const nlohmann::json doc = {{"disagg", run.json}};
        const serve::DisaggStats& ds = c.stats;
        const serve::DisaggSpec& spec = c.spec;
        const serve::ServeStats& dis = ds.end_to_end;
        const std::optional<serve::ServeStats>& agg = c.aggregated;
        const std::int64_t gpus = c.gpus, replicas = c.replicas, agg_tp = c.aggregated_tp;
        const std::int64_t ptp = spec.prefill.tp, dtp = spec.decode.tp;
        const std::int64_t p_count = spec.prefill.instances, d_count = spec.decode.instances;
        const double offered = run.offered;
        if (o.json_path) return write_json_text(doc.dump(2) + "\n", *o.json_path, out, err);
        out << run.model_name << ": disaggregated " << p_count << " prefill x TP " << ptp << " (" << spec.prefill.scheme << ", " << spec.prefill.gpu << ") + " << d_count
            << " decode x TP " << dtp << " (" << spec.decode.scheme << ", " << spec.decode.gpu << "), KV over " << spec.link.name
            << (o.interconnect ? "" : " (the default; --interconnect)") << ", connector " << c.connector.id << (o.kv_connector ? "" : " (the engine's default; --kv-connector)")
            << ", " << gpus << " GPUs\n";
        const serve::TransferTerms& tt = c.connector.transfer;
        if (tt.points > 0)
            out << "transfer: " << fixed(tt.per_transfer_s * 1e3, 2) << " ms a transfer, " << fixed(tt.line_rate_fraction * 100, 0) << "% of the line rate (the "
                << c.connector.id << " connector, " << tt.basis << ")\n";
        else
            out << "transfer: at the line rate (" << tt.basis << ")\n";
        out << "traffic: " << traffic.requests << " requests "
            << (o.concurrency && !o.rate ? "from " + std::to_string(*o.concurrency) + " users (closed loop)" : "at " + fixed(offered, 2) + " requests/s") << ", input "
            << o.isl << ", output " << o.osl << "\n\n";
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
        else table.add_row({"aggregated"}, c.aggregated_refused);
        table.print(out);
        if (search) {
            const serve::DisaggSearch& f = *found;
            const auto cost = [](const serve::LayoutCost& k) {
                return std::to_string(k.gpus) + (k.gpus == 1 ? " GPU" : " GPUs") + (k.usd_per_hour ? ", $" + fixed(*k.usd_per_hour, 2) + "/h" : std::string());
            };
            out << "\nsearch (--disagg auto): the cheapest that holds " << fixed(offered, 2) << " requests/s" << (slo.any() ? " within the SLOs" : " without a growing queue")
                << " (" << f.layouts_run << " layout" << (f.layouts_run == 1 ? "" : "s") << " run end to end)\n  disaggregated: " << p_count << " x " << serve::pool_label(*f.prefill) << " (one carries "
                << fixed(f.prefill_instance_rate, 2) << " req/s) + " << d_count << " x " << serve::pool_label(*f.decode) << " (one carries "
                << fixed(f.decode_instance_rate, 2) << " req/s): " << cost(f.disaggregated_cost) << "\n  aggregated: "
                << (f.aggregated ? std::to_string(f.aggregated_replicas) + " x " + serve::pool_label(*f.aggregated) + ": " + cost(f.aggregated_cost)
                                 : "none up to " + std::to_string(kMaxSearchGpus) + " GPUs")
                << "\n";
            if (!f.skipped.empty()) out << "  " << f.skipped.size() << " candidates skipped (JSON disagg.search.skipped), e.g. " << f.skipped.front().role << " "
                                        << f.skipped.front().label << ": " << f.skipped.front().reason << "\n";
        }
        if (by_prompt && by_tpot) {
            for (const serve::DisaggSweep* sw : {&*by_prompt, &*by_tpot}) {
                const bool prompt = sw->axis == "prompt_tokens";
                out << "\nsweep over " << (prompt ? "prompt length" : "TPOT SLO") << ": " << sw->summary << "\n";
                TextTable t({prompt ? "prompt" : "TPOT SLO", "disaggregated", "aggregated", "cheaper"},
                            {TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
                for (const serve::SweepPoint& p : sw->points) {
                    const auto cell = [](const std::optional<serve::LayoutCost>& k, const std::string& count) {
                        return k ? count + ", " + std::to_string(k->gpus) + (k->gpus == 1 ? " GPU" : " GPUs") + (k->usd_per_hour ? ", $" + fixed(*k->usd_per_hour, 2) + "/h" : std::string())
                                 : std::string("does not hold");
                    };
                    t.add_row({prompt ? std::to_string(static_cast<std::int64_t>(p.x)) : ms(p.x),
                               cell(p.disaggregated, std::to_string(p.prefill_instances) + "P:" + std::to_string(p.decode_instances) + "D"),
                               cell(p.aggregated, std::to_string(p.aggregated_replicas) + (p.aggregated_replicas == 1 ? " replica" : " replicas")), p.winner});
                }
                t.print(out);
            }
        }
        out << "\nwinner: " << c.winner_detail << "\nbound: " << c.bound_detail << "\n";
        if (ds.closed_loop_residual_s > 0)
            out << "note: the closed loop's send times had not settled after " << ds.closed_loop_passes << " passes (they still moved by "
                << ms(ds.closed_loop_residual_s) << "); the figures are those of the last pass\n";
        if (ds.hold_residual_s > 0)
            out << "note: the prefill instances' KV holds had not settled after " << ds.hold_passes << " passes (they still moved by "
                << ms(ds.hold_residual_s) << "); the figures are those of the last pass\n";
        out << "Little's law, end to end: " << fixed(ds.end_mean_in_system, 2) << " requests in the system against throughput x latency "
            << fixed(ds.end_throughput_times_latency, 2) << "\n";
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
