// quantplan --fit-engines: fits the engine profiles to the measurement corpus and writes the fitted
// parameter file (with the corpus checksum) and, with --fidelity-out, the fidelity tables that
// docs/fidelity.md quotes. The fit is core's (core/fidelity/fit.h); this file only reads and writes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/commands.h"
#include "app/data_paths.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/check/bench_result.h"
#include "core/check/check.h"
#include "core/fidelity/fit.h"
#include "core/hardware/gpu.h"

namespace quantplan::app {
namespace {

std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v * 100.0);
    return buf;
}

std::string abs_pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", v * 100.0);
    return buf;
}

std::string num(double v) {
    char buf[32];
    if (std::abs(v) >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
    else if (std::abs(v) >= 1) std::snprintf(buf, sizeof buf, "%.3g", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// "0.4: 377 us (51), 0.6: 58.8 us (93); p = 3", or "-" without a host term.
std::string eager_host_cell(const engine::StepTerms& s) {
    if (s.eager_host.empty() || !(s.eager_blend_exponent > 0)) return "-";
    std::string out;
    for (const engine::EagerHostCost& h : s.eager_host)
        out += (out.empty() ? "" : ", ") + h.version + ": " + num(h.per_layer_s * 1e6) + " us (" + std::to_string(h.points) + ")";
    return out + "; p = " + num(s.eager_blend_exponent);
}

// The corpus's serving runs (concurrency above 1, request rates), which the fit leaves out, priced
// out of sample by the capacity simulator with the fitted profiles, as --check prices a benchmark
// result: the run's prompt count at its mean lengths, a closed loop at its concurrency or Poisson
// arrivals at its rate.
std::string serving_markdown(const fidelity::FidelityReport& r, const fidelity::Corpus& corpus, const engine::EngineCatalog& fitted) {
    check::CheckInputs in;
    in.models_dir = models_dir();
    in.gpus_dir = gpus_dir();
    in.gpus = load_gpu_profiles(gpus_dir());
    in.catalog = &fitted;
    std::map<std::string, const fidelity::Record*> by_id;
    for (const fidelity::Record& rec : corpus.records) by_id[rec.id] = &rec;
    struct Row {
        std::string id, metric, gpu, model, load;
        double measured = 0, predicted = 0;
    };
    std::vector<Row> rows;
    std::map<std::string, std::vector<double>> errors;  // metric -> |error|
    std::int64_t unpriced = 0;
    for (const fidelity::PricedPoint& pt : r.points) {
        if (pt.usable || pt.skip_reason.find("serving simulator") == std::string::npos) continue;
        const fidelity::Record& rec = *by_id.at(pt.id);
        const fidelity::RecordSetup& s = rec.setup;
        std::string key;
        switch (rec.metric) {
            case fidelity::Metric::TtftS: key = "ttft_s"; break;
            case fidelity::Metric::TpotS: key = "tpot_s"; break;
            case fidelity::Metric::ItlS: key = "itl_s"; break;
            case fidelity::Metric::E2eS: key = "e2e_s"; break;
            case fidelity::Metric::OutputTokensPerS: key = "output_tokens_per_s"; break;
            default: break;
        }
        if (key.empty() || s.gpu.empty() || s.engine_version.empty() || s.model.empty()) {
            ++unpriced;
            continue;
        }
        if (key != "output_tokens_per_s") key += "_" + std::string(rec.stat == "p50" || rec.stat == "median" ? "p50" : rec.stat == "p99" ? "p99" : "mean");
        check::BenchResult b;
        b.engine = s.engine;
        b.backend = s.engine;
        b.model = s.checkpoint.empty() ? s.model : s.checkpoint;
        b.num_prompts = s.num_prompts;
        b.completed = s.num_prompts;
        b.request_rate = s.request_rate;
        if (s.concurrency) b.max_concurrency = s.concurrency;
        else if (s.batch) b.max_concurrency = s.batch;
        if (s.input_tokens) b.mean_input_tokens = static_cast<double>(*s.input_tokens);
        else if (s.total_input_tokens && s.num_prompts && *s.num_prompts > 0) b.mean_input_tokens = static_cast<double>(*s.total_input_tokens) / static_cast<double>(*s.num_prompts);
        if (s.output_tokens) b.mean_output_tokens = static_cast<double>(*s.output_tokens);
        else if (s.total_output_tokens && s.num_prompts && *s.num_prompts > 0) b.mean_output_tokens = static_cast<double>(*s.total_output_tokens) / static_cast<double>(*s.num_prompts);
        b.metrics[key] = rec.value;
        check::CheckOptions o;
        o.model = s.model;
        o.gpu = s.gpu;
        o.engine = s.engine + "@" + s.engine_version;
        if (!s.scheme.empty()) o.scheme = s.scheme;
        o.tp = s.tp;
        std::optional<double> predicted;
        try {
            const check::CheckResult c = check::check_bench_result(b, o, in);
            for (const check::CheckRow& row : c.rows)
                if (row.quantity == key && row.predicted) predicted = *row.predicted;
        } catch (const Error&) {
        }  // a TP that does not divide the heads, a model that does not fit: not priced
        if (!predicted || !(rec.value > 0)) {
            ++unpriced;
            continue;
        }
        Row row{rec.id, key, s.gpu, s.model,
                s.request_rate ? num(*s.request_rate) + " req/s" : "c" + std::to_string(s.concurrency.value_or(s.batch.value_or(0))), rec.value,
                *predicted};
        errors[key].push_back(std::abs(*predicted / rec.value - 1));
        rows.push_back(std::move(row));
    }
    std::ostringstream md;
    md << "\n### Serving runs priced by the capacity simulator (out of sample)\n\n";
    md << "The fit leaves serving runs out; here each is priced with the fitted profiles as `quantplan --check` prices a "
          "benchmark result (the run's mean lengths; a closed loop at its concurrency, or Poisson arrivals at its rate). "
       << rows.size() << " points priced, " << unpriced << " not (GPU variant, engine version or model unknown, a model that does "
          "not fit, or a metric the simulator does not give).\n\n";
    md << "| metric | points | median |error| | p90 |error| |\n|---|---:|---:|---:|\n";
    for (auto& [metric, v] : errors) {
        std::sort(v.begin(), v.end());
        const auto q = [&](double f) { return v[std::min(v.size() - 1, static_cast<std::size_t>(f * static_cast<double>(v.size() - 1) + 0.5))]; };
        md << "| " << metric << " | " << v.size() << " | " << abs_pct(q(0.5)) << " | " << abs_pct(q(0.9)) << " |\n";
    }
    md << "\n| id | metric | GPU | model | load | measured | predicted | error |\n|---|---|---|---|---|---:|---:|---:|\n";
    for (const Row& row : rows)
        md << "| " << row.id << " | " << row.metric << " | " << row.gpu << " | " << row.model << " | " << row.load << " | " << num(row.measured) << " | "
           << num(row.predicted) << " | " << pct(row.predicted / row.measured - 1) << " |\n";
    return md.str();
}

}  // namespace

std::string fidelity_markdown(const fidelity::FidelityReport& r, const fidelity::Corpus& corpus) {
    std::ostringstream md;
    const auto& p = r.parameters;
    std::int64_t usable = 0;
    for (const auto& pt : r.points) usable += pt.usable ? 1 : 0;
    md << "Corpus `" << corpus.checksum << "`: " << corpus.records.size() << " records in " << corpus.files.size() << " files; "
       << r.kernel_records << " kernel rows fitted the kernel curves, " << usable << " end-to-end points are priced and "
       << (static_cast<std::int64_t>(r.points.size()) - usable) << " are not (reasons below).\n\n";

    // The gate the ctest entry checks: leave-one-out medians per figure class.
    md << "<!-- fidelity-gate:";
    for (const auto& s : r.summaries)
        if (s.metric.rfind("class:", 0) == 0) md << " " << s.metric.substr(6) << "=" << num(s.median_loo);
    md << " -->\n\n";

    md << "### Median and p90 |error| per figure class and metric\n\n";
    md << "| figure | engine | family | points | median fitted | p90 fitted | median LOO | p90 LOO | median LOSO | p90 LOSO |\n";
    md << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& s : r.summaries)
        md << "| " << s.metric << " | " << s.engine << " | " << s.family << " | " << s.points << " | " << abs_pct(s.median_fitted) << " | "
           << abs_pct(s.p90_fitted) << " | " << abs_pct(s.median_loo) << " | " << abs_pct(s.p90_loo) << " | " << abs_pct(s.median_loso)
           << " | " << abs_pct(s.p90_loso) << " |\n";

    md << "\n### Fitted terms\n\n| profile | fixed per step | per layer and step | eager per layer | eager host per layer (version: points) | served TTFT overhead | in-process TTFT overhead | fitted on | activation scale | non-torch |\n|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n";
    std::map<std::string, int> ids;
    for (const auto& [id, s] : p.step) ids[id] = 1;
    for (const auto& [id, m] : p.memory) ids[id] = 1;
    for (const auto& [id, unused] : ids) {
        const auto s = p.step.find(id);
        const auto m = p.memory.find(id);
        md << "| " << id << " | " << (s != p.step.end() ? num(s->second.fixed_step_s * 1e3) + " ms" : "-") << " | "
           << (s != p.step.end() ? num(s->second.per_layer_s * 1e6) + " us" : "-") << " | "
           << (s != p.step.end() ? num(s->second.eager_per_layer_s * 1e6) + " us" : "-") << " | "
           << (s != p.step.end() ? eager_host_cell(s->second) : "-") << " | "
           << (s != p.step.end() ? num(s->second.ttft_overhead_s * 1e3) + " ms" : "-") << " | "
           << (s != p.step.end() ? num(s->second.ttft_overhead_in_process_s * 1e3) + " ms" : "-") << " | "
           << (s != p.step.end() ? std::to_string(s->second.fitted_points) : "-") << " | "
           << (m != p.memory.end() ? num(m->second.activation_scale) : "-") << " | "
           << (m != p.memory.end() ? num(static_cast<double>(m->second.non_torch_bytes) / 1073741824.0) + " GiB" : "-") << " |\n";
    }

    md << "\n### Bands (p10-p90 of the leave-one-out errors, predicted / measured - 1)\n\n| engine | family | figure | points | p10 | p90 |\n|---|---|---|---:|---:|---:|\n";
    for (const auto& b : p.bands)
        md << "| " << b.engine << " | " << b.family << " | " << engine::figure_class_name(b.figure) << " | " << b.points << " | " << pct(b.p10)
           << " | " << pct(b.p90) << " |\n";

    // Worst points by leave-one-out error.
    std::vector<const fidelity::PricedPoint*> priced;
    for (const auto& pt : r.points)
        if (pt.usable) priced.push_back(&pt);
    std::sort(priced.begin(), priced.end(), [](auto* a, auto* b) { return std::abs(a->error_loo()) > std::abs(b->error_loo()); });
    md << "\n### The worst points (leave-one-out)\n\n| id | metric | GPU | measured | LOO prediction | LOO error |\n|---|---|---|---:|---:|---:|\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(15, priced.size()); ++i)
        md << "| " << priced[i]->id << " | " << fidelity::metric_name(priced[i]->metric) << " | " << priced[i]->gpu << " | " << num(priced[i]->measured)
           << " | " << num(priced[i]->loo) << " | " << pct(priced[i]->error_loo()) << " |\n";

    md << "\n### Not priced\n\n| reason | records |\n|---|---:|\n";
    for (const auto& [why, n] : r.skipped) md << "| " << why << " | " << n << " |\n";

    md << "\n### Every priced point\n\nValues in SI units (tokens/s, seconds, tokens). Errors are predicted / measured - 1 "
          "(a speed as the time it implies).\n\n| id | metric | profile | family | GPU | model | measured | fitted | error | LOO error | LOSO error |\n"
          "|---|---|---|---|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& pt : r.points) {
        if (!pt.usable) continue;
        md << "| " << pt.id << " | " << fidelity::metric_name(pt.metric) << " | " << pt.profile << " | " << pt.family << " | " << pt.gpu << " | "
           << pt.model << " | " << num(pt.measured) << " | " << num(pt.fitted) << " | " << pct(pt.error_fitted()) << " | " << pct(pt.error_loo())
           << " | " << pct(pt.error_loso()) << " |\n";
    }
    return md.str();
}

fidelity::FidelityReport run_fidelity(const CliOptions& o, fidelity::Corpus* corpus_out) {
    std::vector<std::filesystem::path> extra(o.corpus_files.begin(), o.corpus_files.end());
    fidelity::Corpus corpus = fidelity::load_corpus(measurements_dir(), extra);
    fidelity::FitInputs in;
    in.models_dir = models_dir();
    in.gpus = load_gpu_profiles(gpus_dir());
    in.catalog = engine::load_engine_catalog(engine_profiles_dir(), "");  // rules only: the fit makes the values
    fidelity::FidelityReport report = fidelity::evaluate_fidelity(corpus, in);
    if (corpus_out) *corpus_out = std::move(corpus);
    return report;
}

int run_fit_engines(const CliOptions& o, std::ostream& out, std::ostream& err) {
    try {
        fidelity::Corpus corpus;
        const fidelity::FidelityReport report = run_fidelity(o, &corpus);
        const std::filesystem::path fit_path = o.fit_out ? std::filesystem::path(*o.fit_out) : engine_fit_file();
        std::filesystem::create_directories(fit_path.parent_path().empty() ? "." : fit_path.parent_path());
        write_file_atomically(fit_path, engine::fitted_parameters_json(report.parameters));
        out << "quantplan: fitted " << report.parameters.step.size() << " step and " << report.parameters.memory.size()
            << " memory term sets on corpus " << corpus.checksum << " (" << corpus.records.size() << " records); wrote " << fit_path.string() << "\n";
        for (const auto& s : report.summaries)
            if (s.metric.rfind("class:", 0) == 0)
                out << "  " << std::left << std::setw(16) << s.metric.substr(6) << std::right << std::setw(5) << s.points
                    << " points  median |error| fitted " << abs_pct(s.median_fitted) << ", leave-one-out " << abs_pct(s.median_loo)
                    << " (p90 " << abs_pct(s.p90_loo) << "), leave-one-source-out " << abs_pct(s.median_loso) << "\n";
        if (o.fidelity_out) {
            const engine::EngineCatalog fitted = engine::load_engine_catalog(engine_profiles_dir(), fit_path);
            write_file_atomically(*o.fidelity_out, fidelity_markdown(report, corpus) + serving_markdown(report, corpus, fitted));
            out << "quantplan: fidelity tables written to " << *o.fidelity_out << "\n";
        }
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
