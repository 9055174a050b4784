// The measurement corpus and the fit: the reader's units and errors, and the gate: the
// leave-one-out medians recomputed from the bundled corpus are no worse than docs/fidelity.md
// records, and the committed fit file is what the fit of the committed corpus writes.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <algorithm>
#include <map>
#include <set>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/engine/engine_profile.h"
#include "core/fidelity/corpus.h"
#include "core/fidelity/fit.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::fidelity;

namespace {

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

FitInputs fit_inputs() {
    FitInputs in;
    in.models_dir = test::models_dir();
    in.gpus = load_gpu_profiles(test::gpus_dir());
    in.catalog = engine::load_engine_catalog(test::source_dir() / "assets" / "engines" / "profiles", "");
    return in;
}

const FidelityReport& bundled_report() {
    static const FidelityReport r = evaluate_fidelity(load_corpus(test::source_dir() / "assets" / "measurements"), fit_inputs());
    return r;
}

// The bundled corpus with one more file of `records` (a corpus file's text), fitted and priced.
FidelityReport report_with_extra_file(const std::string& name, const std::string& text) {
    const std::filesystem::path extra = std::filesystem::temp_directory_path() / name;
    {
        std::ofstream f(extra);
        f << text;
    }
    // The full fit only: these tests ask what the fit prices, not its held-out errors (the bundled
    // corpus's leave-one-out is computed once, in bundled_report()).
    FitInputs in = fit_inputs();
    in.held_out = false;
    const FidelityReport r = evaluate_fidelity(load_corpus(test::source_dir() / "assets" / "measurements", {extra}), in);
    std::filesystem::remove(extra);
    return r;
}

const char* kOneRecord = R"({"format": "quantplan-measurements/1",
  "source": {"repository": "a/b", "file": "f.md"},
  "defaults": {"speed_counts_prompt": true, "setup": {"engine": "vllm", "engine_version": "v0.6.3", "gpu": "a100-80gb", "tp": 1}},
  "records": [
    {"id": "x/1", "metric": "ttft_s", "value": 59.01, "unit": "ms", "stat": "mean", "setup": {"model": "qwen3-8b", "tp": 2}},
    {"id": "x/2", "metric": "kv_cache_bytes", "value": 2.5, "unit": "GiB", "source": {"issue": 10517}},
    {"id": "x/3", "metric": "decode_tokens_per_s", "value": 84.28, "unit": "tokens/s", "setup": {"batch": 1, "input_tokens": 1}}
  ]})";

}  // namespace

BOOST_AUTO_TEST_SUITE(fidelity_corpus)

BOOST_AUTO_TEST_CASE(records_are_read_in_si_units_with_defaults_merged) {
    const std::vector<Record> r = parse_corpus_file(kOneRecord, "t.json");
    BOOST_TEST_REQUIRE(r.size() == 3u);
    BOOST_TEST(std::abs(r[0].value - 0.05901) < 1e-12);
    BOOST_TEST(r[0].value_as_published == 59.01);
    BOOST_TEST(r[0].setup.engine_version == "0.6.3");  // the leading v dropped
    BOOST_TEST(r[0].setup.tp == 2);                    // the record's own setting wins
    BOOST_TEST(r[0].setup.gpu == "a100-80gb");         // the file's default
    BOOST_TEST(r[0].stat == "mean");
    BOOST_TEST(r[1].value == 2.5 * 1073741824.0);
    BOOST_TEST(r[1].source_key == "t.json#10517");
    BOOST_TEST(r[0].source_key == "t.json#a/b");
    BOOST_TEST(r[2].speed_counts_prompt);
    BOOST_TEST(*r[2].setup.input_tokens == 1);
}

BOOST_AUTO_TEST_CASE(bad_records_name_the_field) {
    const std::string good = kOneRecord;
    const auto with = [&](const std::string& from, const std::string& to) {
        std::string t = good;
        t.replace(t.find(from), from.size(), to);
        return t;
    };
    const struct {
        std::string text;
        const char* fragment;
    } bad[] = {
        {with("\"unit\": \"ms\"", "\"unit\": \"GiB\""), "records[0].unit: 'GiB' does not measure ttft_s"},
        {with("\"unit\": \"ms\"", "\"unit\": \"fortnights\""), "unknown unit"},
        {with("\"metric\": \"ttft_s\"", "\"metric\": \"vibes\""), "unknown metric"},
        {with("\"value\": 59.01", "\"value\": \"59\""), "records[0].value"},
        {with("\"value\": 59.01", "\"value\": 1e400"), "t.json"},
        {with("\"tp\": 2", "\"tp\": \"two\""), "records[0].setup.tp"},
        {with("quantplan-measurements/1", "other"), "t.json.format"},
        {with("\"id\": \"x/2\"", "\"id\": null"), "records[1].id"},
        {with("\"metric\": \"ttft_s\"", "\"component\": \"Q\", \"metric\": \"ttft_s\""), "records[0].component"},
    };
    for (const auto& b : bad) BOOST_TEST(test::throws_naming([&] { parse_corpus_file(b.text, "t.json"); }, b.fragment), b.fragment);
}

BOOST_AUTO_TEST_CASE(the_bundled_corpus_meets_the_issue_s_breadth) {
    const Corpus c = load_corpus(test::source_dir() / "assets" / "measurements");
    std::int64_t speed = 0, kv = 0;
    std::set<std::string> gpus, versions;
    for (const Record& r : c.records) {
        if (r.metric == Metric::KvCacheTokens || r.metric == Metric::GpuBlocks) ++kv;
        if (r.metric == Metric::DecodeTokensPerS || r.metric == Metric::TpotS || r.metric == Metric::ItlS || r.metric == Metric::E2eS) ++speed;
        if (!r.setup.gpu.empty()) gpus.insert(r.setup.gpu);
        if (!r.setup.engine_version.empty()) versions.insert(r.setup.engine + "@" + r.setup.engine_version);
    }
    BOOST_TEST(speed >= 60);
    BOOST_TEST(kv >= 25);
    BOOST_TEST(gpus.size() >= 4u);
    BOOST_TEST(versions.size() >= 3u);
    // The checksum is a function of the files: the same corpus twice gives the same one.
    BOOST_TEST(load_corpus(test::source_dir() / "assets" / "measurements").checksum == c.checksum);
}

// The gate: docs/fidelity.md records the leave-one-out median |error| per figure class in an HTML
// comment; a change that makes a class's median worse than recorded fails here.
BOOST_AUTO_TEST_CASE(leave_one_out_medians_are_no_worse_than_docs_fidelity_records) {
    constexpr double kSlack = 1e-6;  // the doc prints 4 significant digits; the gate allows only rounding
    const std::string doc = read(test::source_dir() / "docs" / "fidelity.md");
    const std::regex gate("<!-- fidelity-gate:([^>]*)-->");
    std::smatch m;
    BOOST_TEST_REQUIRE(std::regex_search(doc, m, gate), "docs/fidelity.md has no fidelity-gate line");
    std::map<std::string, double> recorded;
    const std::string body = m[1];
    const std::regex entry("([a-z_]+)=([0-9.eE+-]+)");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), entry); it != std::sregex_iterator(); ++it)
        recorded[(*it)[1]] = std::stod((*it)[2]);
    BOOST_TEST_REQUIRE(recorded.count("step") == 1u);
    BOOST_TEST_REQUIRE(recorded.count("kv_tokens") == 1u);
    const FidelityReport& r = bundled_report();
    for (const ErrorSummary& s : r.summaries) {
        if (s.metric.rfind("class:", 0) != 0) continue;
        const std::string cls = s.metric.substr(6);
        const auto it = recorded.find(cls);
        BOOST_TEST_REQUIRE((it != recorded.end()), "docs/fidelity.md records no median for " << cls);
        // Recorded with 4 significant digits: allow that rounding.
        const double allowed = it->second * (1.0 + 5e-4) + kSlack;
        BOOST_TEST(s.median_loo <= allowed, cls << ": leave-one-out median " << s.median_loo << " > recorded " << it->second);
    }
}

// The same structure and strings, and numbers equal to a relative 1e-9: a Debug or sanitizer build
// rounds the last digits of a fit differently from Release, a stale file differs far more.
bool same_fit(const nlohmann::json& a, const nlohmann::json& b, std::string& where) {
    // The host costs come out of a golden-section search whose end point moves in the last digits
    // with the build (libm's pow and cbrt variants, sanitizer builds): a refit agrees to about 1e-7.
    constexpr double kFitRelTol = 1e-6;
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        if (std::abs(x - y) <= kFitRelTol * std::max({std::abs(x), std::abs(y), 1e-300})) return true;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.12g vs %.12g", x, y);
        where = buf;
        return false;
    }
    if (a.type() != b.type() || a.size() != b.size()) return where = "structure", false;
    if (a.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it) {
            if (!b.contains(it.key())) return where = it.key(), false;
            if (!same_fit(*it, b[it.key()], where)) return where = it.key() + "." + where, false;
        }
        return true;
    }
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same_fit(a[i], b[i], where)) return where = "[" + std::to_string(i) + "]." + where, false;
        return true;
    }
    if (a != b) return where = a.dump(), false;
    return true;
}

BOOST_AUTO_TEST_CASE(the_committed_fit_file_is_the_fit_of_the_committed_corpus) {
    const std::string committed = read(test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    std::string where;
    BOOST_TEST(same_fit(nlohmann::json::parse(engine::fitted_parameters_json(bundled_report().parameters)), nlohmann::json::parse(committed), where),
               "assets/engines/fit/engine-fit.json is stale (at " << where << "): rerun scripts/update-fidelity-doc");
}

// A MoE kernel scale apart from the dense one stands on two models' points (kMinModelsForMoeScale):
// SGLang's bf16-moe, fitted on Qwen3-30B-A3B and Qwen3-235B-A22B, stays; vLLM's bf16 MoE points are
// Qwen2-57B-A14B's alone, so no vLLM profile holds a -moe scale, and those points are left out of
// every step fit (the pooled vLLM basis counts every vLLM step point but those four).
BOOST_AUTO_TEST_CASE(a_moe_scale_needs_the_points_of_two_models) {
    const FidelityReport& r = bundled_report();
    for (const auto& [id, st] : r.parameters.step) {
        const bool has_moe = std::any_of(st.kernel_scale_by_family.begin(), st.kernel_scale_by_family.end(),
                                         [](const auto& kv) { return kv.first.find("-moe") != std::string::npos; });
        if (id.rfind("vllm", 0) == 0) BOOST_TEST(!has_moe, id);
        if (id.rfind("sglang", 0) == 0) BOOST_TEST(st.kernel_scale_by_family.count("bf16-moe") == 1u, id);
    }
    std::size_t qwen2_moe_points = 0;
    for (const PricedPoint& p : r.points)
        if (p.usable && p.model == "qwen2-57b-a14b-instruct" && p.engine == "vllm") ++qwen2_moe_points;
    BOOST_TEST(qwen2_moe_points == 4u);  // still priced and in the tables, with the dense scales
    // vllm-v0's own costs are refitted on its step points without them: its basis counts the
    // profile's models but Qwen2-57B-A14B.
    std::set<std::string> v0_models;
    for (const PricedPoint& p : r.points)
        if (p.usable && p.profile == "vllm-v0" && p.figure == engine::FigureClass::Step && p.model != "qwen2-57b-a14b-instruct") v0_models.insert(p.model);
    const std::string v0_basis = r.parameters.step.at("vllm-v0").basis;
    BOOST_TEST(v0_basis.find("(" + std::to_string(v0_models.size()) + " models)") != std::string::npos, v0_basis);
}

// Which single-request records the fit prices, and how: one request in flight at a request rate is
// timed alone; a tail statistic is not a step; a stated median input length stands for the input;
// an in-process TTFT carries no API-server overhead, a served one carries the fitted overhead.
BOOST_AUTO_TEST_CASE(single_request_records_are_priced_as_their_setup_says) {
    const FidelityReport r = report_with_extra_file("quantplan_tst_fidelity_single.json", R"({"format": "quantplan-measurements/1", "source": {"repository": "test/single"},
  "defaults": {"setup": {"engine": "vllm", "engine_version": "0.11.0", "gpu": "h100-sxm", "model": "qwen3-8b", "scheme": "bf16",
                         "concurrency": 1, "input_tokens": 1000, "output_tokens": 100}},
  "records": [
    {"id": "t/served", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50"},
    {"id": "t/in-process", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50", "setup": {"in_process": true}},
    {"id": "t/at-a-rate", "metric": "tpot_s", "value": 8, "unit": "ms", "stat": "mean", "setup": {"request_rate": 2}},
    {"id": "t/open-loop", "metric": "tpot_s", "value": 8, "unit": "ms", "stat": "mean", "setup": {"request_rate": 2, "concurrency": null}},
    {"id": "t/tail", "metric": "ttft_s", "value": 95, "unit": "ms", "stat": "p99"},
    {"id": "t/median-length", "metric": "ttft_s", "value": 300, "unit": "ms", "stat": "p50", "setup": {"input_tokens": null, "input_tokens_p50": 6000}},
    {"id": "t/median-output", "metric": "tpot_s", "value": 8, "unit": "ms", "stat": "p50", "setup": {"output_tokens": null, "output_tokens_p50": 300}},
    {"id": "t/own-config", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50", "setup": {"model": "qwen3-4b", "base_architecture": "qwen3-8b"}},
    {"id": "t/base", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50", "setup": {"model": "no-such-fine-tune", "base_architecture": "qwen3-8b"}},
    {"id": "t/unbundled", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50", "setup": {"model": "no-such-fine-tune"}},
    {"id": "t/unpriced-architecture", "metric": "ttft_s", "value": 80, "unit": "ms", "stat": "p50", "setup": {"model": "phi-2"}}
  ]})");
    std::map<std::string, const PricedPoint*> by_id;
    for (const PricedPoint& p : r.points) by_id[p.id] = &p;
    for (const char* id : {"t/served", "t/in-process", "t/at-a-rate", "t/open-loop", "t/tail", "t/median-length", "t/median-output", "t/own-config", "t/base",
                           "t/unbundled", "t/unpriced-architecture"})
        BOOST_TEST_REQUIRE(by_id.count(id) == 1u, id);
    // A fine-tune is priced with its own bundled config.json; the architecture it was trained from
    // stands in only when its own is not bundled.
    BOOST_TEST_REQUIRE(by_id["t/own-config"]->usable, by_id["t/own-config"]->skip_reason);
    BOOST_TEST_REQUIRE(by_id["t/base"]->usable, by_id["t/base"]->skip_reason);
    BOOST_TEST(by_id["t/base"]->fitted == by_id["t/served"]->fitted);
    // Without the held-out refits (FitInputs::held_out false) a point's loo and loso are its fit's.
    BOOST_TEST(by_id["t/served"]->loo == by_id["t/served"]->fitted);
    BOOST_TEST(by_id["t/served"]->loso == by_id["t/served"]->fitted);
    BOOST_TEST(by_id["t/own-config"]->fitted < by_id["t/served"]->fitted);
    BOOST_TEST(!by_id["t/unbundled"]->usable);
    BOOST_TEST(by_id["t/unbundled"]->skip_reason == "model config not bundled");
    // phi-2's config.json is bundled for the corpus, but model_type phi is not priced: said apart.
    BOOST_TEST(!by_id["t/unpriced-architecture"]->usable);
    BOOST_TEST(by_id["t/unpriced-architecture"]->skip_reason == "model config bundled, architecture not priced");
    BOOST_TEST(by_id["t/at-a-rate"]->usable, by_id["t/at-a-rate"]->skip_reason);
    BOOST_TEST(!by_id["t/open-loop"]->usable);
    BOOST_TEST(by_id["t/open-loop"]->skip_reason.find("request rate") != std::string::npos, by_id["t/open-loop"]->skip_reason);
    BOOST_TEST(!by_id["t/tail"]->usable);
    BOOST_TEST(by_id["t/tail"]->skip_reason.find("tail statistic (p99)") != std::string::npos, by_id["t/tail"]->skip_reason);
    const PricedPoint& median = *by_id["t/median-length"];
    BOOST_TEST_REQUIRE(median.usable, median.skip_reason);
    BOOST_TEST(median.input_tokens == 6000);
    BOOST_TEST(median.note.find("stated median input length") != std::string::npos, median.note);
    const PricedPoint& median_output = *by_id["t/median-output"];
    BOOST_TEST_REQUIRE(median_output.usable, median_output.skip_reason);
    BOOST_TEST(median_output.output_tokens == 300);
    BOOST_TEST(median_output.note.find("stated median output length") != std::string::npos, median_output.note);
    // The served overhead and the in-process one are two fitted terms; a served TTFT pays the first.
    const engine::StepTerms& v1 = r.parameters.step.at("vllm-v1");
    BOOST_TEST(v1.ttft_overhead_s > 0.0);
    BOOST_TEST(v1.ttft_overhead_in_process_s > 0.0);
    BOOST_TEST(std::abs((by_id["t/served"]->fitted - by_id["t/in-process"]->fitted) - (v1.ttft_overhead_s - v1.ttft_overhead_in_process_s)) < 1e-12);
    // The eager term is fitted on the engine's eager decode points (vLLM #20469, Qwen2.5-32B bf16).
    BOOST_TEST(r.parameters.step.at("vllm-v1").eager_per_layer_s > 0.0);
}

// A hybrid model's KV-cache size is predicted through vLLM's hybrid division (one attention group
// and three gated DeltaNet groups of 12 for Qwen3-Next, blocks of 544 tokens at TP 2), not as if
// every layer held every token in blocks of 16: the vLLM 0.10.2 H200 log (tests/data/logs/, stored
// id 7292846353) is predicted in whole 544-token steps and within the 14% the check shows, where
// the plain division would be four times off.
BOOST_AUTO_TEST_CASE(hybrid_kv_points_are_divided_as_vllm_divides_them) {
    const FidelityReport r = report_with_extra_file("quantplan_tst_fidelity_hybrid.json", R"({"format": "quantplan-measurements/1", "source": {"repository": "test/hybrid"},
  "records": [
    {"id": "t/qwen3-next", "metric": "kv_cache_tokens", "value": 973760, "unit": "tokens",
     "setup": {"engine": "vllm", "engine_version": "0.10.2", "gpu": "h200", "tp": 2, "model": "qwen3-next-80b-a3b-thinking",
               "scheme": "bf16", "max_model_len": 262144, "max_num_batched_tokens": 8192, "kv_cache_dtype": "auto"}}
  ]})");
    const auto it = std::find_if(r.points.begin(), r.points.end(), [](const PricedPoint& p) { return p.id == "t/qwen3-next"; });
    BOOST_TEST_REQUIRE((it != r.points.end()));
    BOOST_TEST_REQUIRE(it->usable, it->skip_reason);
    BOOST_TEST(std::fmod(it->fitted, 544.0) == 0.0, it->fitted);
    BOOST_TEST(std::abs(it->fitted / 973760.0 - 1) < 0.2, it->fitted);
}

BOOST_AUTO_TEST_CASE(leave_one_out_differs_from_the_full_fit_and_is_not_better_overall) {
    const FidelityReport& r = bundled_report();
    double sum_fitted = 0, sum_loo = 0;
    std::int64_t n = 0;
    for (const PricedPoint& p : r.points) {
        if (!p.usable || p.figure != engine::FigureClass::Step) continue;
        sum_fitted += std::abs(p.error_fitted());
        sum_loo += std::abs(p.error_loo());
        ++n;
    }
    BOOST_TEST_REQUIRE(n > 20);
    // Holding a point out can only make the least-squares fit worse for it on average.
    BOOST_TEST(sum_loo >= sum_fitted);
    for (const PricedPoint& p : r.points)
        if (!p.usable) BOOST_TEST(!p.skip_reason.empty(), p.id);
}

BOOST_AUTO_TEST_SUITE_END()
