// --serve: capacity planning on the simulator (docs/capacity.md). Every scheme's traffic runs
// through the engine profile's step model; a scheme that does not fit at the chosen TP is an
// answer ("does not fit at TP 1; fits from TP 2"), not an error.
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <filesystem>
#include <map>
#include <set>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "app/scenario.h"
#include "app/text_table.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/engine/step_model.h"
#include "core/report/report_json.h"
#include "core/roofline/decision.h"
#include "core/serve/capacity_plan.h"
#include "core/serve/gpu_prices.h"

namespace quantplan::app {
namespace {

std::map<std::string, double> parse_prices(const std::vector<std::string>& given) {
    std::map<std::string, double> out;
    for (const std::string& p : given) {
        const std::size_t eq = p.find('=');
        if (eq == std::string::npos || eq == 0) throw Error("--price", "'" + p + "' is not GPU=USD_PER_HOUR");
        double v = 0;
        std::size_t used = 0;
        try {
            v = std::stod(p.substr(eq + 1), &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != p.size() - eq - 1 || !(v > 0) || v > 1e4) throw Error("--price", "'" + p + "': the price is USD per GPU-hour, above 0");
        out[p.substr(0, eq)] = v;
    }
    return out;
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::map<std::string, double> serving_prices(const CliOptions& o, std::map<std::string, double>& prices, std::map<std::string, std::string>& sources) {
    const std::filesystem::path file = gpu_prices_file();
    const std::vector<serve::GpuPrice> bundled =
        serve::parse_gpu_prices(read_text_file(file.string(), "assets/prices/gpu-prices.json", 4 << 20), "assets/prices/gpu-prices.json");
    for (const auto& [id, p] : serve::default_gpu_prices(bundled)) {
        prices[id] = p.usd_per_gpu_hour;
        sources[id] = p.provider + ", " + p.offering + ", " + (p.date ? *p.date : std::string("undated")) + " (" + p.source + "; assets/prices/gpu-prices.json)";
    }
    const std::map<std::string, double> given = parse_prices(o.prices);
    for (const auto& [id, usd] : given) {
        prices[id] = usd;
        sources[id] = "--price";
    }
    return given;
}

std::vector<std::pair<std::string, std::string>> compared_gpus(const CliOptions& o, const std::map<std::string, double>& given_prices,
                                                               const std::map<std::string, double>& prices) {
    std::vector<std::pair<std::string, std::string>> more;
    for (const auto& [id, usd] : given_prices) more.emplace_back(id, "--price");
    if (o.compare_gpus && *o.compare_gpus == "all") {
        for (const auto& [id, usd] : prices) more.emplace_back(id, "--compare-gpus");
    } else if (o.compare_gpus) {
        const std::string& list = *o.compare_gpus;
        for (std::size_t from = 0; from <= list.size();) {
            const std::size_t comma = std::min(list.find(',', from), list.size());
            const std::string id = list.substr(from, comma - from);
            if (id.empty()) throw Error("--compare-gpus", "'" + list + "' is not all or GPU ids joined with commas");
            more.emplace_back(id, "--compare-gpus");
            from = comma + 1;
        }
    }
    return more;
}

bool capacity_asked(const CliOptions& o) {
    return o.serve || o.rate || o.concurrency || o.trace || o.slo_ttft || o.slo_tpot || o.slo_e2e || o.target_rate || !o.prices.empty();
}

void serve_inputs(const CliOptions& o, serve::Traffic& traffic, serve::Slo& slo) {
    if (o.rate && (!(*o.rate > 0) || *o.rate > 1e6)) throw Error("--rate", "must be above 0 (requests per second)");
    if (o.concurrency && (*o.concurrency <= 0 || *o.concurrency > 1'000'000)) throw Error("--concurrency", "must be 1 to 1000000 users");
    if (o.rate && o.concurrency) throw Error("--rate", "give --rate or --concurrency, not both");
    if (o.target_rate && (!(*o.target_rate > 0) || *o.target_rate > 1e9)) throw Error("--target-rate", "must be above 0 (requests per second)");
    if (o.seed < 0) throw Error("--seed", "must be 0 or positive");
    traffic.rate_per_s = o.rate;
    traffic.concurrency = o.concurrency;
    traffic.requests = o.requests;
    if (o.requests < 1 || o.requests > 1'000'000) throw Error("--requests", "must be 1 to 1000000");
    traffic.input = serve::parse_length_spec(o.isl, "--isl");
    traffic.output = serve::parse_length_spec(o.osl, "--osl");
    traffic.seed = static_cast<std::uint64_t>(o.seed);
    traffic.arrival = serve::parse_arrival(o.arrival, "--arrival");
    if (o.prefix < 0 || o.prefix > (1 << 24)) throw Error("--prefix", "must be 0 to 16777216 tokens");
    traffic.prefix_tokens = o.prefix;
    if (o.trace) traffic.trace = serve::read_trace(*o.trace, "--trace");
    slo.ttft = serve::parse_slo(o.slo_ttft, "--slo-ttft");
    slo.tpot = serve::parse_slo(o.slo_tpot, "--slo-tpot");
    slo.e2e = serve::parse_slo(o.slo_e2e, "--slo-e2e");
}

CapacityRun run_capacity(const CliOptions& given) {
    CapacityRun run;
    CliOptions& o = run.options;
    o = given;
    if (o.scenario) apply_scenario_file(o, *o.scenario);
    o.profile = "engine";  // the simulator prices every step with the engine profile's step model
    serve::Traffic& traffic = run.traffic;
    serve::Slo& slo = run.slo;
    serve_inputs(o, traffic, slo);
    // Prices: the bundled list's default for each GPU, then --price.
    const std::map<std::string, double> given_prices = serving_prices(o, run.prices, run.price_sources);
    const std::map<std::string, double>& prices = run.prices;

    // The engine's max_model_len: the longest request the traffic can hold.
    const std::int64_t longest = serve::longest_request(traffic);
    o.context = longest;
    o.batch = 1;
    run.request = plan_request_from_options(o);
    PlanRequest& request = run.request;
    const GpuProfile& gpu = request.gpu;
    if (request.schemes.empty()) {
        for (const std::string& n : default_serving_scheme_names()) request.schemes.push_back(parse_scheme(n));
        if (gpu.peak.fp4_flop_per_s > 0) request.schemes.push_back(parse_scheme("w4a4-nvfp4"));
    }
    run.target = o.target_rate ? o.target_rate : o.rate;
    const std::optional<double>& target = run.target;
    // The recommendation's candidates: --gpu, every GPU given a --price, and --compare-gpus.
    std::vector<PlanRequest> candidates;
    if (target) {
        candidates.push_back(request);
        const std::vector<std::pair<std::string, std::string>> more = compared_gpus(o, given_prices, prices);  // id, the option that named it
        std::set<std::string> seen = {gpu.id};
        for (const auto& [id, option] : more) {
            if (!seen.insert(id).second) continue;
            CliOptions og = o;
            og.gpu = id;
            try {
                candidates.push_back(plan_request_from_options(og));
            } catch (const Error& e) {
                throw Error(option, id + ": " + e.what());
            }
        }
    }
    serve::CapacityRequest ask;
    ask.traffic = traffic;
    ask.slo = slo;
    ask.target_rate = target;
    ask.prices = prices;
    run.plan = serve::capacity_plan(request, candidates, ask);
    const auto price = prices.find(gpu.id);
    run.traffic_json = {{"rate_requests_per_s", opt(o.rate)}, {"concurrency", opt(o.concurrency)}, {"requests", o.requests},
                        {"isl", o.isl}, {"osl", o.osl}, {"seed", o.seed}, {"arrival", o.arrival},
                        {"trace", opt(o.trace)}, {"prefix_tokens", o.prefix}, {"target_rate_requests_per_s", opt(target)},
                        {"price_usd_per_gpu_hour", price != prices.end() ? nlohmann::json(price->second) : nlohmann::json(nullptr)},
                        {"price_source", price != prices.end() ? nlohmann::json(run.price_sources.at(gpu.id)) : nlohmann::json(nullptr)},
                        {"compare_gpus", opt(o.compare_gpus)}};
    return run;
}

nlohmann::json capacity_document(const CapacityRun& run) {
    nlohmann::json doc;
    try {
        doc = plan_json(plan(run.request));
    } catch (const Error&) {
        // No scheme fits at this TP: the serve array is still the answer.
        doc = {{"model", run.request.model.name}, {"gpu", run.request.gpu.id}};
    }
    doc["serve"] = serve::serve_json(run.plan);
    doc["serve_recommendation"] = serve::recommendation_json(run.plan, run.target);
    doc["serve_traffic"] = run.traffic_json;
    return doc;
}

int run_serve(const CliOptions& given, std::ostream& out, std::ostream& err) {
    if (given.disagg) return run_disagg(given, out, err);
    if (given.prefill_tp || given.decode_tp || given.prefill_scheme || given.decode_scheme || given.prefill_gpu || given.decode_gpu || given.interconnect ||
        given.interconnect_links || given.kv_connector || given.disagg_sweep) {
        err << "quantplan: --disagg: the prefill and decode pools' options need --disagg P:D\n";
        return 1;
    }
    try {
        const CapacityRun run = run_capacity(given);
        const CliOptions& o = run.options;
        const serve::Traffic& traffic = run.traffic;
        const serve::Slo& slo = run.slo;
        const PlanRequest& request = run.request;
        const ModelConfig& model = request.model;
        const GpuProfile& gpu = request.gpu;
        const engine::EngineSetup& setup = *request.engine;
        const std::map<std::string, double>& prices = run.prices;
        const auto price = prices.find(gpu.id);
        const std::optional<double>& target = run.target;
        const serve::CapacityPlan& capacity = run.plan;
        const std::vector<serve::SchemeCapacity>& rows = capacity.schemes;
        const std::vector<serve::Configuration>& ranked = capacity.ranked;
        const std::vector<std::string>& vetoes = capacity.vetoes;

        if (!o.json_path) {
            const bool host_path = tp_all_reduces_through_host(request.workload, gpu);
            out << model.name << " on " << gpu.name << ", TP " << request.workload.tensor_parallel
                << (host_path ? " (no peer-to-peer: all-reduces through host memory; --gpu-p2p on if the platform has it)" : "") << ", engine "
                << setup.profile.title << " ["
                << setup.profile.id << "]\n";
            out << "traffic: "
                << (o.trace ? std::to_string(traffic.trace.size()) + " requests from " + *o.trace : std::to_string(o.requests) + " requests") << ", "
                << (o.rate ? fixed(*o.rate, 2) + " requests/s (" + traffic.arrival.text + ")"
                           : o.concurrency ? std::to_string(*o.concurrency) + " users (closed loop)"
                           : o.trace ? std::string("as recorded")
                           : traffic.arrival.kind == serve::Arrival::Kind::Burst ? std::string("all at once")
                                                                                 : std::string("at each scheme's highest rate"))
                << (o.trace ? std::string() : ", input " + traffic.input.text + ", output " + traffic.output.text + " tokens")
                << (o.prefix > 0 ? ", shared prefix " + std::to_string(o.prefix) + " tokens" : std::string()) << ", seed " << o.seed << "\n";
            if (request.spec) {
                const SpecPlanRequest& sp = *request.spec;
                out << "speculative decoding: " << engine::spec_method_name(sp.request.method)
                    << (sp.request.draft_model.empty() ? "" : ":" + sp.request.draft_model) << ":" << sp.request.k << ", mean acceptance length "
                    << fixed(sp.acceptance.mean_length(), 2) << " (" << sp.acceptance.source << "); each step's accepted tokens drawn with seed "
                    << o.seed << "\n";
            }
            if (slo.any()) {
                out << "SLOs:";
                const auto show = [&](const char* n, const std::optional<serve::SloTarget>& s) {
                    if (s) out << " " << n << " p" << std::llround(s->quantile * 100) << " <= " << fixed(s->seconds * 1e3, 1) << " ms";
                };
                show("TTFT", slo.ttft);
                show("TPOT", slo.tpot);
                show("E2E", slo.e2e);
                out << "\n";
            }
            // Columns sized to their widest value (TextTable): no figure runs into the next.
            TextTable table({"scheme", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "out tok/s", "SLO %", "max req/s", "replicas", "headroom",
                             "$/M out", "what binds"},
                            {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                             TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right,
                             TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
            for (const serve::SchemeCapacity& r : rows) {
                if (!r.fits) {
                    table.add_row({r.name}, r.reason);
                    continue;
                }
                const serve::ServeStats& s = r.stats;
                const std::string max_rate = r.max_rate ? fixed(*r.max_rate, 2) : "-";
                const std::string replicas = r.replicas ? std::to_string(*r.replicas) : "-";
                const std::string headroom = r.headroom ? "+" + fixed(*r.headroom * 100, 0) + "%" : "-";
                const std::string cost = r.cost_output ? fixed(*r.cost_output, 3) : "-";
                const std::string binds = r.binding ? r.binding->detail : "";
                if (s.overloaded) {
                    // A growing queue: its latencies depend on how long the run was, so none are shown.
                    table.add_row({r.name, "-", "-", "-", "-", "-", "-", max_rate, replicas, headroom, cost, binds},
                                  "overloaded: completes " + fixed(s.completed_requests_per_s, 2) + " of " + fixed(s.offered_requests_per_s, 2) +
                                      " requests/s offered");
                    continue;
                }
                table.add_row({r.name, fixed(s.ttft_s.p50 * 1e3, 1) + " ms", fixed(s.ttft_s.p99 * 1e3, 1) + " ms", fixed(s.tpot_s.p50 * 1e3, 2) + " ms",
                               fixed(s.tpot_s.p99 * 1e3, 2) + " ms", fixed(s.output_tokens_per_s, 0), fixed(s.slo_attainment * 100, 1), max_rate,
                               replicas, headroom, cost, binds});
                // The serving fit's band under each figure it has one for (p10-p90: docs/capacity.md).
                const auto band = [&](const char* figure, double predicted, double unit, int digits, const char* suffix) {
                    const std::optional<serve::FigureBand> b = serve::figure_band(capacity, figure, predicted);
                    return b ? fixed(b->low * unit, digits) + "-" + fixed(b->high * unit, digits) + suffix : std::string();
                };
                const std::string ttft_band = band("ttft_s", s.ttft_s.p50, 1e3, 1, " ms");
                if (!ttft_band.empty())
                    table.add_row({"  p10-p90", ttft_band, "", band("tpot_s", s.tpot_s.p50, 1e3, 2, " ms"), "", band("output_tokens_per_s", s.output_tokens_per_s, 1, 0, ""), "",
                                   r.max_rate ? band("requests_per_s", *r.max_rate, 1, 2, "") : "", "", "", "", ""});
            }
            out << "\n";
            table.print(out);
            for (const serve::SchemeCapacity& r : rows)
                if (r.fits && r.stats.speculative)
                    out << r.name << ": " << fixed(r.stats.spec_tokens_per_step, 2) << " tokens per decoding sequence per step, "
                        << fixed(r.stats.spec_acceptance_rate * 100, 1) << "% of speculative tokens accepted\n";
            out << "\nmax req/s: the highest Poisson rate one replica sustains within the SLOs and stable (its queue does not grow);"
                << (target ? " replicas for " + fixed(*target, 2) + " requests/s, headroom the capacity they have beyond it;"
                           : " replicas: pass --target-rate;")
                << (price != prices.end() ? " $/M out at the highest rate, " + fixed(price->second, 2) + " USD per GPU-hour"
                                          : " cost: no bundled price for " + gpu.id + "; pass --price " + gpu.id + "=USD_PER_HOUR")
                << "\n";
            if (!capacity.bands.empty())
                out << "p10-p90: where the measured figure is expected to lie, from the serving fit's leave-one-source-out errors on "
                       "published runs under load (docs/capacity.md)\n";
            if (price != prices.end()) out << "price: " << run.price_sources.at(gpu.id) << "\n";
            if (target) {
                out << "\nrecommendation for " << fixed(*target, 2) << " requests/s within the SLOs (cheapest first"
                    << "; GPUs without a price last, fewest GPUs first; more GPUs: --compare-gpus all):\n";
                if (ranked.empty()) out << "  no configuration meets the SLOs\n";
                for (std::size_t i = 0; i < ranked.size() && i < 10; ++i) {
                    const serve::Configuration& c = ranked[i];
                    out << "  " << i + 1 << ". " << std::left << std::setw(14) << c.gpu << " TP " << c.tp << "  " << std::setw(16) << c.scheme
                        << std::right << " x " << c.replicas << (c.replicas == 1 ? " replica = " : " replicas = ") << c.gpus << " GPUs, " << fixed(c.max_rate, 2)
                        << " requests/s each (headroom +" << fixed(c.headroom * 100, 0) << "%)" << (c.usd_per_hour ? ", " + fixed(*c.usd_per_hour, 2) + " USD/h" : std::string())
                        << (c.cost_output ? ", " + fixed(*c.cost_output, 3) + " USD per million output tokens" : std::string())
                        << (c.binding.detail.empty() ? std::string() : "; binds: " + c.binding.detail) << "\n";
                }
                for (const std::string& v : vetoes) out << "  vetoed: " << v << "\n";
            }
            return 0;
        }
        return write_json_text(capacity_document(run).dump(2) + "\n", *o.json_path, out, err);
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
