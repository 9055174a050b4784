// The log corpus summarised per quantity (core/check/log_corpus.h).
#include "core/check/log_corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/stats.h"

namespace quantplan::check {
namespace {

// The rows a startup-log check prints, in its order.
const std::vector<std::string>& quantities_in_order() {
    static const std::vector<std::string> q = {"weights_bytes",  "activation_peak_bytes", "non_torch_bytes", "cuda_graph_bytes",
                                               "kv_cache_bytes", "kv_cache_tokens",       "max_concurrency"};
    return q;
}


std::string percent(double f, bool sign) {
    char buf[32];
    std::snprintf(buf, sizeof buf, sign ? "%+.1f%%" : "%.1f%%", f * 100.0);
    return buf;
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

}  // namespace

CheckOptions options_from_expectation(std::string_view expect_json, const std::string& source) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(expect_json);
    } catch (const nlohmann::json::exception& e) {
        throw Error(source, std::string("not JSON: ") + e.what());
    }
    if (!doc.is_object()) throw Error(source, "not a JSON object");
    CheckOptions o;
    if (const auto m = doc.find("quantplan_model"); m != doc.end() && m->is_string() && !m->get<std::string>().empty()) o.model = m->get<std::string>();
    if (const auto g = doc.find("quantplan_gpu"); g != doc.end() && g->is_string() && !g->get<std::string>().empty()) o.gpu = g->get<std::string>();
    return o;
}

CorpusLog check_corpus_log(const std::string& name, const StartupLog& log, CheckOptions options, const CheckInputs& inputs) {
    CorpusLog out;
    out.name = name;
    std::string first;
    try {
        out.result = check_startup_log(log, options, inputs);
        return out;
    } catch (const Error& e) {
        first = e.what();
    }
    if (!options.model) {
        out.refused = first;
        return out;
    }
    options.model.reset();
    try {
        out.result = check_startup_log(log, options, inputs);
        out.result.notes.push_back("the expectation's model is not priced (" + first + "): checked without it");
    } catch (const Error& e) {
        out.refused = e.what();
    }
    return out;
}

CorpusSummary summarize_corpus(std::vector<CorpusLog> logs) {
    std::sort(logs.begin(), logs.end(), [](const CorpusLog& a, const CorpusLog& b) { return a.name < b.name; });
    CorpusSummary s;
    s.logs = std::move(logs);
    for (const std::string& q : quantities_in_order()) {
        CorpusQuantity c;
        c.quantity = q;
        std::vector<double> abs_errors, signed_errors;
        for (const CorpusLog& log : s.logs)
            for (const CheckRow& row : log.result.rows) {
                if (row.quantity != q) continue;
                ++c.logged;
                if (!row.error_fraction || !std::isfinite(*row.error_fraction)) continue;
                ++c.predicted;
                const double e = *row.error_fraction;
                abs_errors.push_back(std::abs(e));
                signed_errors.push_back(e);
                if (std::abs(e) > c.max_abs_error || c.max_log.empty()) c.max_abs_error = std::abs(e), c.max_log = log.name;
            }
        if (c.logged == 0) continue;
        c.median_abs_error = median(abs_errors);
        c.median_signed_error = median(signed_errors);
        s.quantities.push_back(c);
    }
    return s;
}

const CorpusQuantity* corpus_quantity(const CorpusSummary& s, const std::string& quantity) {
    for (const CorpusQuantity& q : s.quantities)
        if (q.quantity == quantity) return &q;
    return nullptr;
}

std::string corpus_markdown(const CorpusSummary& s) {
    std::string out;
    out += "| quantity | logs printing it | predicted | median abs error | median signed | largest abs error | in |\n";
    out += "|---|---:|---:|---:|---:|---:|---|\n";
    for (const CorpusQuantity& q : s.quantities)
        out += "| " + q.quantity + " | " + std::to_string(q.logged) + " | " + std::to_string(q.predicted) + " | " +
               (q.predicted ? percent(q.median_abs_error, false) : "-") + " | " + (q.predicted ? percent(q.median_signed_error, true) : "-") +
               " | " + (q.predicted ? percent(q.max_abs_error, false) : "-") + " | " + (q.predicted ? q.max_log : "-") + " |\n";
    out += "\n| log | engine | version | GPU | model | TP | scheme |";
    const std::vector<std::string>& order = quantities_in_order();
    for (const std::string& q : order) out += " " + q + " |";
    out += "\n|---|---|---|---|---|---:|---|";
    for (std::size_t i = 0; i < order.size(); ++i) out += "---:|";
    out += "\n";
    for (const CorpusLog& log : s.logs) {
        if (!log.refused.empty()) continue;
        const Identified& id = log.result.identified;
        out += "| " + log.name + " | " + or_dash(id.engine) + " | " + or_dash(id.version) + " | " + or_dash(id.gpu) + " | " + or_dash(id.model) +
               " | " + std::to_string(id.tp) + " | " + or_dash(id.scheme) + " |";
        for (const std::string& q : order) {
            std::string cell = " ";
            for (const CheckRow& row : log.result.rows)
                if (row.quantity == q) cell = row.error_fraction ? percent(*row.error_fraction, true) : "logged";
            out += " " + cell + " |";
        }
        out += "\n";
    }
    for (const CorpusLog& log : s.logs)
        if (!log.refused.empty()) out += "\nrefused: " + log.name + ": " + log.refused + "\n";
    return out;
}

}  // namespace quantplan::check
