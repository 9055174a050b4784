// quantplan --fit-disagg: the disaggregation model (core/serve/disagg.h) and the aggregated
// simulator beside it, each run's published figures predicted at its own setup
// (assets/measurements/disaggregated/disaggregated-serving.json), and the errors per figure.
// Of the disaggregation model only the connectors' transfer terms (serve::TransferTerms: a cost per
// transfer and a share of the line rate) are fitted to this corpus, to its published transfer
// times; --fit-out FILE writes them [assets/engines/fit/kv-transfer-fit.json], and each transfer
// time is predicted from the fit of the others (leave-one-out). The rest (the step model and the
// serving terms come from the engine and serving fits, whose corpora hold none of these runs) is
// held out whole. --fidelity-out FILE writes the table docs/disaggregation.md quotes
// (docs/disagg-fidelity.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/data_paths.h"
#include "app/headless.h"
#include "app/text_table.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/base/stats.h"
#include "core/base/text_file.h"
#include "core/fidelity/corpus.h"
#include "core/serve/disagg_plan.h"

namespace quantplan::app {
namespace {

struct Figure {
    std::string id, metric, stat;
    double measured = 0;      // SI: seconds, requests/s, tokens/s
    double predicted = 0;
    bool priced = false;
    std::string skip;         // why not priced
    // A published transfer time: the connector it measures and the transfer it times.
    std::string connector;
    std::optional<serve::TransferPoint> transfer;
    double error() const { return predicted / measured - 1; }
};

struct CorpusRun {
    std::string key, source, layout;  // layout: "disaggregated" or "aggregated"
    std::string setup_text;           // "4P x TP 1 + 1D x TP 4, nvlink5, concurrency 16, 3000/150"
    std::vector<Figure> figures;
    std::string skip;
    std::string note;                 // what was assumed
};

std::string text_at(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::int64_t> int_at(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(it->get<double>()));
}

std::optional<double> num_at(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

// The record's value in SI units, or nullopt for a unit the model does not predict (per node, per
// GPU, thousands of tokens per node).
std::optional<double> si_value(double v, const std::string& unit) {
    if (unit == "ms") return v * 1e-3;
    if (unit == "s") return v;
    if (unit == "tokens/s" || unit == "requests/s") return v;
    return std::nullopt;
}

// The bundled interconnect a run's stated link names by id, if it does.
std::optional<std::string> stated_link(const std::string& text) {
    const std::string first = text.substr(0, text.find_first_of(" (;,"));
    if (first.empty()) return std::nullopt;
    if (std::filesystem::is_regular_file(interconnects_dir() / (first + ".json"))) return first;
    return std::nullopt;
}

double predicted_figure(const serve::ServeStats& s, const std::string& metric, const std::string& stat, double replicas) {
    const serve::Percentiles* p = metric == "ttft_s" ? &s.ttft_s : metric == "tpot_s" ? &s.tpot_s : metric == "itl_s" ? &s.itl_s : metric == "e2e_s" ? &s.e2e_s : nullptr;
    if (p) return stat == "mean" ? p->mean : stat == "p50" ? p->p50 : stat == "p90" ? p->p90 : p->p99;
    if (metric == "requests_per_s") return s.requests_per_s * replicas;
    return s.output_tokens_per_s * replicas;
}

// The error class a figure counts in.
std::string figure_class(const std::string& metric) {
    if (metric == "kv_transfer_s") return "KV transfer";
    if (metric == "ttft_s") return "TTFT";
    if (metric == "tpot_s" || metric == "itl_s") return "TPOT / ITL";
    if (metric == "e2e_s") return "E2E";
    return "rate";
}

// A run's published KV-transfer times (Mooncake's pages: the time to move one request's KV cache,
// a request at a time): the prompt's bytes as the decode ranks receive them
// (serve::kv_transfer_bytes_per_token at the decode TP) over the links between the pools (the
// stated count, else one a rank of the smaller pool, as the simulator sends) plus the link's
// latency. Needs the model, its scheme, the pools' TPs and a bundled link, not the GPU: the KV
// bytes a token are the model's and the KV dtype's. Returns false when it cannot price them.
bool price_transfers(CorpusRun& run, const nlohmann::json& setup) {
    const bool any = std::any_of(run.figures.begin(), run.figures.end(), [](const Figure& f) { return f.skip.empty() && f.metric == "kv_transfer_s"; });
    if (!any) return false;
    const nlohmann::json disagg = setup.contains("disagg") && setup["disagg"].is_object() ? setup["disagg"] : nlohmann::json();
    // The model, or for the KV bytes alone the bundled architecture the record says it shares
    // (base_architecture, with its basis in the record).
    const std::string model_name = !text_at(setup, "model").empty() ? text_at(setup, "model") : text_at(setup, "base_architecture");
    const std::optional<std::int64_t> isl = int_at(setup, "input_tokens");
    if (model_name.empty() || disagg.is_null() || !isl) return false;
    const auto ptp = int_at(disagg, "prefill_tp"), dtp = int_at(disagg, "decode_tp");
    const std::optional<std::string> link_id = stated_link(text_at(disagg, "interconnect"));
    if (!ptp || !dtp || !link_id) return false;
    std::string scheme = text_at(setup, "scheme");
    std::string assumed;
    if (scheme.empty() && text_at(setup, "quantization_as_stated").empty()) {
        scheme = "bf16";
        assumed = "scheme not stated: the checkpoint's own dtype (bf16; the engines' --dtype auto)";
    }
    if (scheme.empty()) return false;
    try {
        const ModelConfig model = resolve_model(model_name, models_dir());
        // The KV bytes a token do not depend on the GPU: the run's where it is bundled, else any
        // bundled profile prices them.
        const std::string stated = text_at(setup, "gpu");
        const GpuProfile any_gpu = resolve_gpu(stated.empty() ? "h100-sxm" : stated, gpus_dir());
        const KvFormat kv = parse_kv_format(text_at(setup, "kv_cache_dtype").find("fp8") != std::string::npos ? "fp8" : "bf16");
        const SchemeCosts costs = scheme_costs(model, tensor_inventory(model), parse_scheme(scheme), kv, any_gpu);
        const serve::Interconnect link = serve::resolve_interconnect(*link_id, interconnects_dir());
        const std::int64_t links = int_at(disagg, "links").value_or(std::min(*ptp, *dtp));
        const double bytes = static_cast<double>(*isl) * serve::kv_transfer_bytes_per_token(costs, *dtp);
        // The connector that moved it: the record's kv_connector, else the engine's default.
        const std::string connector = serve::resolve_connector(text_at(disagg, "kv_connector"), text_at(setup, "engine")).id;
        serve::TransferPoint point;
        point.bytes_per_link = bytes / static_cast<double>(std::max<std::int64_t>(links, 1));
        point.bandwidth_bytes_per_s = link.bandwidth_bytes_per_s;
        point.latency_s = link.latency_s;
        for (Figure& f : run.figures)
            if (f.skip.empty() && f.metric == "kv_transfer_s") {
                // At the line rate until the fit (run_fit_disagg) prices it from the other transfers.
                f.predicted = serve::transfer_time_s(serve::TransferTerms{}, point.bytes_per_link, point.bandwidth_bytes_per_s, point.latency_s);
                f.priced = true;
                f.connector = connector;
                f.transfer = point;
                f.transfer->measured_s = f.measured;
            }
        std::ostringstream what;
        what << *ptp << " TP -> " << *dtp << " TP, " << *link_id << " x " << links << ", " << model_name << " " << scheme << ", " << *isl << " tokens, " << connector;
        run.setup_text = what.str();
        if (!assumed.empty()) run.note = assumed;
        return true;
    } catch (const Error&) {
        return false;
    }
}

// Prices one run: its options from the record's setup, then the disaggregated layout (through
// --serve --disagg's own path) or the aggregated replicas.
void price_run(CorpusRun& run, const nlohmann::json& setup, bool transfers, const std::map<std::string, serve::TransferTerms>& transfer_fit) {
    const std::string model = text_at(setup, "model"), gpu = text_at(setup, "gpu");
    // A run whose KV transfers were priced stays priced for them when the rest cannot be.
    const auto give_up = [&](const std::string& why) {
        if (!transfers) return void(run.skip = why);
        for (Figure& f : run.figures)
            if (f.skip.empty() && !f.priced) f.skip = why + " (the KV transfer priced alone)";
    };
    if (model.empty()) return give_up("model not stated");
    if (gpu.empty()) return give_up("GPU not stated, or not one quantplan bundles");
    const std::optional<std::int64_t> isl = int_at(setup, "input_tokens"), osl = int_at(setup, "output_tokens");
    if (!isl || !osl) return give_up("input or output length not stated as a fixed length");
    const std::optional<double> rate = num_at(setup, "request_rate");
    const std::optional<std::int64_t> users = int_at(setup, "concurrency");
    if (!rate && !users) return give_up("load not stated (neither a rate nor a concurrency)");
    std::string scheme = text_at(setup, "scheme");
    const std::string quant = text_at(setup, "quantization_as_stated");
    if (scheme.empty() && quant.rfind("FP8", 0) == 0) scheme = "w8a8-fp8";
    if (scheme.empty()) return give_up("scheme not stated");
    CliOptions o;
    o.headless = true;
    o.serve = true;
    o.model = model;
    o.model_given = true;
    o.gpu = gpu;
    o.gpu_given = true;
    o.schemes = scheme;
    if (text_at(setup, "kv_cache_dtype").find("fp8") != std::string::npos) o.kv = "fp8";
    const std::string engine_text = text_at(setup, "engine");
    o.engine = engine_text.find("sglang") != std::string::npos ? "sglang" : "vllm";
    if (engine_text.rfind("dynamo", 0) == 0) o.kv_connector = "dynamo";
    o.isl = std::to_string(*isl);
    o.osl = std::to_string(*osl);
    if (rate) o.rate = *rate;
    else o.concurrency = *users;
    o.requests = int_at(setup, "num_prompts").value_or(1000);
    if (const auto m = int_at(setup, "max_num_batched_tokens")) o.max_num_batched_tokens = *m, o.max_num_batched_tokens_given = true;
    std::ostringstream what;
    const nlohmann::json disagg = setup.contains("disagg") && setup["disagg"].is_object() ? setup["disagg"] : nlohmann::json();
    std::optional<serve::ServeStats> stats;
    double replicas = 1;
    try {
        if (!disagg.is_null()) {
            const auto p = int_at(disagg, "prefill_instances"), dd = int_at(disagg, "decode_instances");
            const auto ptp = int_at(disagg, "prefill_tp"), dtp = int_at(disagg, "decode_tp");
            if (!p || !dd || !ptp || !dtp) return give_up("pool sizes or TPs not stated");
            o.disagg = std::to_string(*p) + ":" + std::to_string(*dd);
            o.prefill_tp = *ptp;
            o.decode_tp = *dtp;
            o.tp = *dtp;
            const std::string link_text = text_at(disagg, "interconnect");
            if (const auto id = stated_link(link_text)) o.interconnect = *id;
            else run.note = "link not stated as a rate (" + link_text.substr(0, 60) + "): priced at the default, InfiniBand NDR";
            if (const auto links = int_at(disagg, "links")) o.interconnect_links = *links;
            what << *p << "P x TP " << *ptp << " + " << *dd << "D x TP " << *dtp << ", " << o.interconnect.value_or("infiniband-ndr");
            stats = compute_disagg(o, &transfer_fit).comparison.stats.end_to_end;
        } else {
            const auto tp = int_at(setup, "tp"), instances = int_at(setup, "instances");
            if (!tp || !instances) return give_up("TP or replicas not stated");
            o.tp = *tp;
            replicas = static_cast<double>(*instances);
            serve::Traffic traffic;
            serve::Slo slo;
            serve_inputs(o, traffic, slo);
            const std::int64_t longest = serve::longest_request(traffic);
            o.context = longest;
            o.batch = 1;
            o.profile = "engine";
            const PlanRequest r = plan_request_from_options(o);
            const serve::PoolPricing pricing = serve::pool_pricing(r, parse_scheme(scheme), *tp, longest, "--tp");
            stats = serve::run_traffic(serve::replica_share(traffic, *instances), pricing.pricing, slo);
            what << *instances << " x TP " << *tp;
        }
    } catch (const Error& e) {
        return give_up(std::string("not priced: ") + e.what());
    }
    what << ", " << gpu << ", " << scheme << (o.kv == "fp8" ? " (fp8 KV)" : "") << ", " << (rate ? "rate " + fixed(*rate, 1) : "concurrency " + std::to_string(*users))
         << ", " << *isl << "/" << *osl;
    run.setup_text = what.str();
    for (Figure& f : run.figures) {
        if (!f.skip.empty() || f.priced) continue;  // a KV transfer is priced by price_transfers
        f.predicted = predicted_figure(*stats, f.metric, f.stat, replicas);
        f.priced = true;
    }
}

struct Summary {
    std::map<std::string, std::map<std::string, std::vector<double>>> errors;  // layout -> class -> |error|
};

std::string pct(double v) { return fixed(v * 100, 1) + "%"; }
std::string signed_pct(double v) { return (v >= 0 ? "+" : "") + pct(v); }

}  // namespace

int run_fit_disagg(const CliOptions& given, std::ostream& out, std::ostream& err) {
    try {
        const std::filesystem::path file = disagg_measurements_file();
        const std::string corpus_text = read_text_file(file.string(), "--fit-disagg", 16 << 20);
        const nlohmann::json doc = parse_untrusted_json(corpus_text, file.filename().string());
        // The corpus checksum the fit file carries (its name and bytes, as the other fits chain theirs).
        std::string corpus_checksum;
        {
            char buf[40];
            std::snprintf(buf, sizeof buf, "fnv1a64:%016llx",
                          static_cast<unsigned long long>(fidelity::fnv1a64(corpus_text, fidelity::fnv1a64(file.filename().string()))));
            corpus_checksum = buf;
        }
        if (!doc.is_object() || !doc.contains("records") || !doc["records"].is_array())
            throw Error(file.filename().string(), "expected an object with a records array");
        // Runs: a record's id without its last segment (the figure) names its run.
        std::vector<CorpusRun> runs;
        std::map<std::string, std::size_t> index;
        std::map<std::string, nlohmann::json> setups;
        for (const nlohmann::json& r : doc["records"]) {
            const std::string id = text_at(r, "id");
            const std::size_t slash = id.rfind('/');
            if (id.empty() || slash == std::string::npos) continue;
            const std::string key = id.substr(0, slash);
            if (!index.count(key)) {
                index[key] = runs.size();
                CorpusRun run;
                run.key = key;
                const nlohmann::json& src = r.contains("source") ? r["source"] : nlohmann::json();
                run.source = src.is_object() ? (text_at(src, "repository").empty() ? text_at(src, "url") : text_at(src, "repository") + "/" + text_at(src, "file")) : "";
                const nlohmann::json setup = r.contains("setup") && r["setup"].is_object() ? r["setup"] : nlohmann::json::object();
                const bool split = setup.contains("disagg") && setup["disagg"].is_object();
                run.layout = split ? "disaggregated" : "aggregated";
                setups[key] = setup;
                runs.push_back(run);
            }
            Figure f;
            f.id = id;
            f.metric = text_at(r, "metric");
            f.stat = text_at(r, "stat");
            const std::optional<double> v = num_at(r, "value");
            // Assigned in a branch, not from a conditional expression: GCC 12 then warned that the
            // optional's value may be read uninitialized (-Wmaybe-uninitialized, a false positive).
            std::optional<double> si;
            if (v) si = si_value(*v, text_at(r, "unit"));
            static const std::vector<std::string> metrics = {"ttft_s", "tpot_s", "itl_s", "e2e_s", "requests_per_s", "output_tokens_per_s", "kv_transfer_s"};
            if (std::find(metrics.begin(), metrics.end(), f.metric) == metrics.end()) f.skip = "figure not predicted (" + f.metric + ")";
            else if (!si || !(*si > 0)) f.skip = "unit not predicted (" + text_at(r, "unit") + ")";
            else if (f.metric.find("per_s") == std::string::npos && f.metric != "kv_transfer_s" && f.stat != "mean" && f.stat != "p50" && f.stat != "p90" && f.stat != "p99")
                f.skip = "statistic not computed (" + f.stat + ")";
            f.measured = si.value_or(0.0);
            runs[index[key]].figures.push_back(f);
        }
        // The published transfer times first (they need only the model, the TPs and the link).
        std::map<std::string, bool> transfers;
        for (CorpusRun& run : runs) {
            const bool any = std::any_of(run.figures.begin(), run.figures.end(), [](const Figure& f) { return f.skip.empty(); });
            if (!any) run.skip = "no figure quantplan predicts (per node, per GPU, speed-ups or p95 only)";
            else transfers[run.key] = price_transfers(run, setups[run.key]);
        }
        // The connectors' transfer terms: fitted to every published transfer time of each connector
        // (the file), and each time predicted from the fit of the connector's others (leave-one-out).
        std::map<std::string, std::vector<serve::TransferPoint>> by_connector;
        std::map<std::string, std::set<std::string>> connector_sources;
        for (const CorpusRun& run : runs)
            for (const Figure& f : run.figures)
                if (f.priced && f.transfer) by_connector[f.connector].push_back(*f.transfer), connector_sources[f.connector].insert(run.source);
        std::map<std::string, serve::TransferTerms> fit;
        for (const auto& [id, points] : by_connector) {
            serve::TransferTerms t = serve::fit_transfer_terms(points);
            if (t.points == 0) continue;
            t.basis = "fitted to " + std::to_string(t.points) + " published transfer times (";
            bool first = true;
            for (const std::string& src : connector_sources[id]) t.basis += (first ? "" : ", ") + src, first = false;
            t.basis += "; quantplan --fit-disagg)";
            fit[id] = t;
        }
        std::map<std::string, std::vector<double>> line_rate_errors, loo_errors;
        std::map<std::string, std::size_t> at_point;  // connector -> the index of its next point (the order by_connector holds them in)
        for (CorpusRun& run : runs)
            for (Figure& f : run.figures) {
                if (!f.priced || !f.transfer) continue;
                line_rate_errors[f.connector].push_back(std::abs(f.error()));
                // Its connector's other points (the same order as they were gathered: this one by index).
                const std::vector<serve::TransferPoint>& all = by_connector[f.connector];
                const std::size_t self = at_point[f.connector]++;
                std::vector<serve::TransferPoint> others;
                for (std::size_t k = 0; k < all.size(); ++k)
                    if (k != self) others.push_back(all[k]);
                const serve::TransferTerms t = serve::fit_transfer_terms(others);
                f.predicted = serve::transfer_time_s(t, f.transfer->bytes_per_link, f.transfer->bandwidth_bytes_per_s, f.transfer->latency_s);
                loo_errors[f.connector].push_back(std::abs(f.error()));
            }
        // Then every other figure, with the connectors' terms just fitted (not the file's).
        for (CorpusRun& run : runs)
            if (run.skip.empty()) price_run(run, setups[run.key], transfers[run.key], fit);
        {
            const std::filesystem::path path = given.fit_out ? std::filesystem::path(*given.fit_out) : kv_transfer_fit_file();
            write_file_atomically(path.string(), serve::transfer_fit_json(fit, corpus_checksum).dump(1) + "\n");
        }
        // Errors per layout and class.
        Summary sum;
        std::size_t priced_runs = 0, priced_figures = 0;
        std::map<std::string, int> sources;
        for (const CorpusRun& run : runs) {
            if (!run.skip.empty()) continue;
            ++priced_runs;
            ++sources[run.source];
            for (const Figure& f : run.figures)
                if (f.priced) {
                    ++priced_figures;
                    sum.errors[run.layout][figure_class(f.metric)].push_back(std::abs(f.error()));
                    sum.errors["all"][figure_class(f.metric)].push_back(std::abs(f.error()));
                }
        }
        std::ostringstream md;
        md << "<!-- generated by quantplan --fit-disagg --fidelity-out; do not edit by hand -->\n\n";
        md << "Runs in the corpus: " << runs.size() << "; priced: " << priced_runs << " from " << sources.size() << " source" << (sources.size() == 1 ? "" : "s")
           << ", " << priced_figures << " figures. Of the disaggregation model only the connectors' transfer terms are fitted to this corpus, "
              "and each KV-transfer time below is predicted from the fit of its connector's other times; every other figure is held out whole "
              "(its leave-one-out error).\n\n";
        md << "Transfer terms per connector (quantplan --fit-disagg --fit-out, assets/engines/fit/kv-transfer-fit.json), and the median "
              "|error| of its transfer times at the line rate and leave-one-out:\n\n"
              "| connector | per transfer | share of the line rate | times | at the line rate | leave-one-out |\n|---|---|---|---|---|---|\n";
        for (const auto& [id, errors] : line_rate_errors) {
            const auto t = fit.find(id);
            md << "| " << id << " | " << (t != fit.end() ? fixed(t->second.per_transfer_s * 1e3, 3) + " ms" : std::string("-")) << " | "
               << (t != fit.end() ? pct(t->second.line_rate_fraction) : std::string("-")) << " | " << errors.size() << " | " << pct(median(errors)) << " | "
               << pct(median(loo_errors[id])) << " |\n";
        }
        md << "\n";
        md << "Median |predicted / measured - 1| (figures):\n\n| layout | TTFT | TPOT / ITL | rate | E2E | KV transfer |\n|---|---|---|---|---|---|\n";
        for (const char* layout : {"disaggregated", "aggregated", "all"}) {
            md << "| " << layout;
            for (const char* cls : {"TTFT", "TPOT / ITL", "rate", "E2E", "KV transfer"}) {
                const auto l = sum.errors.find(layout);
                const std::vector<double>* v = l != sum.errors.end() && l->second.count(cls) ? &l->second.at(cls) : nullptr;
                md << " | " << (v && !v->empty() ? pct(median(*v)) + " (" + std::to_string(v->size()) + ")" : std::string("-"));
            }
            md << " |\n";
        }
        md << "\n| run | layout as run | figure | measured | predicted | error |\n|---|---|---|---|---|---|\n";
        for (const CorpusRun& run : runs) {
            if (!run.skip.empty()) continue;
            for (const Figure& f : run.figures) {
                if (!f.priced) continue;
                const bool time = f.metric.find("per_s") == std::string::npos;
                const auto show = [&](double v) { return time ? fixed(v * 1e3, 1) + " ms" : fixed(v, 2); };
                md << "| " << run.key << " | " << run.setup_text << " | " << f.metric << (f.stat.empty() ? "" : " " + f.stat) << " | " << show(f.measured) << " | "
                   << show(f.predicted) << " | " << signed_pct(f.error()) << " |\n";
            }
        }
        md << "\nAssumed where the source is silent:\n\n";
        bool any_note = false;
        for (const CorpusRun& run : runs)
            if (run.skip.empty() && !run.note.empty()) md << "- " << run.key << ": " << run.note << "\n", any_note = true;
        if (!any_note) md << "- nothing\n";
        std::map<std::string, int> skipped;
        for (const CorpusRun& run : runs)
            if (!run.skip.empty()) ++skipped[run.skip.substr(0, run.skip.find(':'))];
        md << "\nRuns not priced:\n\n";
        for (const auto& [why, n] : skipped) md << "- " << why << ": " << n << "\n";
        if (given.fidelity_out) write_file_atomically(*given.fidelity_out, md.str());
        out << md.str();
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
