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
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/fidelity/fit.h"

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

    md << "\n### Fitted terms\n\n| profile | fixed per step | per layer and step | fitted on | activation scale | non-torch |\n|---|---:|---:|---:|---:|---:|\n";
    std::map<std::string, int> ids;
    for (const auto& [id, s] : p.step) ids[id] = 1;
    for (const auto& [id, m] : p.memory) ids[id] = 1;
    for (const auto& [id, unused] : ids) {
        const auto s = p.step.find(id);
        const auto m = p.memory.find(id);
        md << "| " << id << " | " << (s != p.step.end() ? num(s->second.fixed_step_s * 1e3) + " ms" : "-") << " | "
           << (s != p.step.end() ? num(s->second.per_layer_s * 1e6) + " us" : "-") << " | "
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
            write_file_atomically(*o.fidelity_out, fidelity_markdown(report, corpus));
            out << "quantplan: fidelity tables written to " << *o.fidelity_out << "\n";
        }
        return 0;
    } catch (const Error& e) {
        err << "quantplan: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace quantplan::app
