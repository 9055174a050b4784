// The serving fit (core/fidelity/serving_fit.h): the committed assets/engines/fit/serving-fit.json
// is what the fit of assets/serving-runs/ gives, and its leave-one-out and leave-one-source-out
// medians do not grow by more than 2 points (the load issue's guard).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "core/base/text_file.h"
#include "core/engine/engine_profile.h"
#include "core/fidelity/serving_fit.h"
#include "tests/core/test_support.h"

using namespace quantplan;

namespace {

// The guard: a median may grow by at most this much (the issue's 2 points).
constexpr double kMedianSlack = 0.02;
// Fitted terms agree with the committed file to this relative precision (the golden-section end
// points move in the last digits between builds, as the step fit's do).
constexpr double kTermTolerance = 1e-6;

// The fit's inputs from the bundled models, GPUs and engine profiles with the step fit applied.
fidelity::ServingFitInputs bundled_inputs() {
    const auto root = quantplan::test::source_dir();
    static const engine::EngineCatalog catalog =
        engine::load_engine_catalog(root / "assets" / "engines" / "profiles", root / "assets" / "engines" / "fit" / "engine-fit.json");
    fidelity::ServingFitInputs in;
    in.models_dir = root / "models";
    in.gpus = load_gpu_profiles(root / "assets" / "gpus");
    in.catalog = &catalog;
    return in;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(serving_fit)

BOOST_AUTO_TEST_CASE(the_committed_serving_fit_is_the_fit_of_the_runs_and_holds_its_medians) {
    const auto root = quantplan::test::source_dir();
    const engine::ServingFit committed =
        engine::parse_serving_fit(read_text_file(root / "assets" / "engines" / "fit" / "serving-fit.json", "serving fit"), "serving-fit.json");
    std::string checksum;
    const std::vector<fidelity::ServingRunRecord> runs = fidelity::load_serving_runs(root / "assets" / "serving-runs", &checksum);
    BOOST_TEST(checksum == committed.corpus_checksum);  // else: run quantplan --fit-serving
    const fidelity::ServingFitReport r = fidelity::fit_serving(runs, bundled_inputs(), true);
    std::map<std::string, std::string> source_of;  // file -> source
    for (const fidelity::ServingRunRecord& x : runs) source_of[x.file] = x.source;
    BOOST_TEST(r.runs_used == committed.runs);
    BOOST_TEST(r.runs_used >= 40);
    for (const auto& [id, t] : committed.terms) {
        const auto it = r.fit.terms.find(id);
        BOOST_TEST_REQUIRE((it != r.fit.terms.end()), id);
        const auto close = [](double a, double b) { return std::abs(a - b) <= kTermTolerance * std::max({std::abs(a), std::abs(b), 1e-9}); };
        BOOST_TEST(close(it->second.host_per_sequence_s, t.host_per_sequence_s), id << " host per sequence " << it->second.host_per_sequence_s << " vs " << t.host_per_sequence_s);
        BOOST_TEST(close(it->second.host_per_prefill_sequence_s, t.host_per_prefill_sequence_s), id);
        BOOST_TEST(close(it->second.frontend_serial_s, t.frontend_serial_s), id << " frontend serial " << it->second.frontend_serial_s << " vs " << t.frontend_serial_s);
    }
    BOOST_TEST_REQUIRE(!committed.medians.empty());
    for (const auto& [figure, m] : committed.medians) {
        const auto it = r.fit.medians.find(figure);
        BOOST_TEST_REQUIRE((it != r.fit.medians.end()), figure);
        BOOST_TEST(it->second.first <= m.first + kMedianSlack, figure << " leave-one-out " << it->second.first << " was " << m.first);
        BOOST_TEST(it->second.second <= m.second + kMedianSlack, figure << " leave-one-source-out " << it->second.second << " was " << m.second);
    }
    // A burst whose mean TTFT beats the GPUs' peak for its prompts is listed (kept in the fit):
    // dennislee22's test 4 burst of 75 x 1,021 tokens to Qwen2-7B on one A100 (mean TTFT 1.14 s)
    // is; the same burst on its test 5 server (2.60 s) is not.
    const auto listed = [&](const std::string& run) {
        return std::any_of(r.beats_peak.begin(), r.beats_peak.end(), [&](const fidelity::BeatsPeak& b) { return b.run == run; });
    };
    BOOST_TEST(listed("dl-test4-a100x1-qwen2-7b-gmu0.25-in1024-out1024-np75-burst"));
    BOOST_TEST(!listed("dl-test5-a100x1-qwen2-7b-gmu0.5-in1024-out1024-np75-burst"));
    // Its floor by hand: 75 prompts of 1,024 tokens (the stated length), the k-th first token after
    // k prompts, so a mean of 38 prompts' worth, at 2 x Qwen2-7B's 6.525e9 block-linear parameters
    // (28 layers x (2 x 3584^2 + 2 x 3584 x 512 + 3 x 3584 x 18944)) a token, at the A100's 312 TFLOP/s.
    const double by_hand = 38.0 * 1024 * 2 * 28 * (2.0 * 3584 * 3584 + 2.0 * 3584 * 512 + 3.0 * 3584 * 18944) / 312e12;
    for (const fidelity::BeatsPeak& b : r.beats_peak)
        if (b.run == "dl-test4-a100x1-qwen2-7b-gmu0.25-in1024-out1024-np75-burst")
            BOOST_TEST(std::abs(b.floor_s / by_hand - 1) < 0.01, b.floor_s << " vs " << by_hand);
    // Each group's serial frontend time lets through the highest rate its fitted runs measured (the
    // runs a file fits with: its first max_fit_runs_per_file).
    std::map<std::string, double> fastest;  // group -> requests/s
    std::map<std::pair<std::string, std::string>, std::set<std::string>> fitted_runs;  // (group, file) -> runs
    for (const fidelity::ServingPoint& pt : r.points) {
        if (!pt.in_fit) continue;
        fitted_runs[{pt.group, pt.file}].insert(pt.run);
        if (pt.figure == "requests_per_s") fastest[pt.group] = std::max(fastest[pt.group], pt.measured);
    }
    const std::int64_t per_file = fidelity::ServingFitInputs{}.max_fit_runs_per_file;
    for (const auto& [key, runs_of] : fitted_runs) BOOST_TEST(static_cast<std::int64_t>(runs_of.size()) <= per_file, key.first << " " << key.second);
    {
        // The fitted runs are each file's first max_fit_runs_per_file of its group, in file order,
        // recomputed here apart from the fit's own flag.
        std::map<std::pair<std::string, std::string>, std::vector<std::string>> first;  // (group, file) -> runs in order
        for (const fidelity::ServingPoint& pt : r.points) {
            std::vector<std::string>& v = first[{pt.group, pt.file}];
            if (std::find(v.begin(), v.end(), pt.run) == v.end()) v.push_back(pt.run);
        }
        for (const fidelity::ServingPoint& pt : r.points) {
            const std::vector<std::string>& v = first.at({pt.group, pt.file});
            const bool expected = std::find(v.begin(), v.end(), pt.run) - v.begin() < per_file;
            BOOST_TEST(pt.in_fit == expected, pt.file << " " << pt.run);
        }
    }
    // A source is its repository: GPUStack's lab pages are one source, held out together
    // (leave-one-source-out), so a lab's pages on the same machines do not vouch for each other.
    BOOST_TEST(source_of.at("mixed-gpustack-qwen3-32b-h100.json") == "gpustack/gpustack");
    BOOST_TEST(source_of.at("mixed-gpustack-qwen3-32b-a100.json") == "gpustack/gpustack");
    BOOST_TEST_REQUIRE(fastest.count("vllm-v1") == 1u);
    for (const auto& [group, rate] : fastest) BOOST_TEST_MESSAGE(group << ": fastest fitted run " << rate << " requests/s");
    for (const engine::EngineProfile& prof : bundled_inputs().catalog->profiles) {
        const auto t = r.fit.terms.find(prof.id);
        const auto f = fastest.find(fidelity::serving_group(prof));
        if (t == r.fit.terms.end() || f == fastest.end()) continue;
        BOOST_TEST(t->second.frontend_serial_s * f->second <= 1.0 + 1e-9, prof.id << " serial " << t->second.frontend_serial_s << " s against " << f->second << " requests/s measured");
    }
    // vLLM 0.6.0 with --num-scheduler-steps 10 (SGLang's comparison page, Llama-3.1-8B on an A100 at
    // 8 requests/s) is replayed with its windows: its tokens stream ten at a time, so its ITL p50
    // (158.6 ms published) is about ten passes where its TPOT p50 (17.1 ms) is one, and the replay
    // shows the same (a plain V0 scheduler would put the two together).
    std::map<std::string, const fidelity::ServingPoint*> multistep;
    for (const fidelity::ServingPoint& pt : r.points)
        if (pt.run == "sgl060-a100-80gb-l31-8b-vllm060-sharegpt-rps8-n2400") multistep[pt.figure + ":" + pt.stat] = &pt;
    BOOST_TEST_REQUIRE(multistep.count("itl_s:p50") == 1u);
    BOOST_TEST_REQUIRE(multistep.count("tpot_s:p50") == 1u);
    for (const auto& [key, pt] : multistep) BOOST_TEST_MESSAGE("vLLM 0.6.0 multi-step " << key << ": " << pt->measured << " measured, " << pt->loso << " predicted");
    // Ten passes a chunk, less the chunks a request's last window cuts short and the gaps a prefill
    // step lengthens: more than six passes at the median separates the windows from a plain
    // scheduler's one. The errors' bound: the corpus's own p10-p90 band of TPOT and ITL under load
    // is about +-50%; these two sit well inside it, half that keeps a margin for refits.
    constexpr double kChunkPasses = 6, kMultiStepError = 0.25;
    BOOST_TEST(multistep.at("itl_s:p50")->loso > kChunkPasses * multistep.at("tpot_s:p50")->loso);
    BOOST_TEST(std::abs(multistep.at("itl_s:p50")->error_loso()) < kMultiStepError, multistep.at("itl_s:p50")->loso);
    BOOST_TEST(std::abs(multistep.at("tpot_s:p50")->error_loso()) < kMultiStepError, multistep.at("tpot_s:p50")->loso);
    // The serving terms help: TTFT's leave-one-source-out median is below the simulator's without them.
    for (const fidelity::ServingSummary& s : r.summaries)
        if (s.engine == "*" && s.figure == "ttft_s") BOOST_TEST(s.median_abs_loso < s.median_abs_unfitted);
}

BOOST_AUTO_TEST_CASE(a_malformed_serving_run_file_is_one_error) {
    const auto dir = std::filesystem::temp_directory_path() / "quantplan-serving-runs-test";
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "bad.json") << R"({"format": "quantplan-measurements/1", "records": [{"metric": "ttft_s", "value": 1, "unit": "ms", "setup": {}}]})";
    }
    BOOST_TEST(quantplan::test::throws_naming([&] { fidelity::load_serving_runs(dir); }, "setup.run"));
    {
        std::ofstream(dir / "bad.json") << R"({"format": "quantplan-measurements/1", "records": [{"metric": "ttft_s", "stat": "mean", "value": 1, "unit": "furlongs", "setup": {"run": "a"}}]})";
    }
    BOOST_TEST(quantplan::test::throws_naming([&] { fidelity::load_serving_runs(dir); }, "unit"));
    std::filesystem::remove_all(dir);
}

// What a run replays when its file has no per-request lengths (docs/capacity.md): a dataset's
// reference sample (lengths/dataset-<name>.csv) for a run that states none, and a stated fixed
// length replayed at what ran where the totals disagree with it. Two runs that differ only in a
// stated output of 200 tokens whose totals say 134 ran, and a stated 134, are predicted alike;
// total tokens/s is a figure of its own; the KV-cache dtype of the run is read.
BOOST_AUTO_TEST_CASE(runs_replay_what_ran) {
    const auto dir = std::filesystem::temp_directory_path() / "quantplan-serving-runs-replay";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "lengths");
    std::ofstream(dir / "lengths" / "dataset-sharegpt.csv") << "input_tokens,output_tokens\n10,300\n200,20\n40,100\n";
    const auto run = [](const std::string& name, const std::string& extra) {
        return R"({"metric": "total_tokens_per_s", "value": 1000, "unit": "tok/s", "setup": {"run": ")" + name +
               R"(", "engine": "vllm", "engine_version": "0.10.1", "gpu": "h100-sxm", "model": "qwen3-8b", "scheme": "bf16", "num_prompts": 60, )" + extra + "}}";
    };
    std::ofstream(dir / "runs.json") << R"({"format": "quantplan-measurements/1", "records": [)"
                                     << run("asked-200", R"("input_tokens": 500, "output_tokens": 200, "total_input_tokens": 30000, "total_output_tokens": 8040)") << ", "
                                     << run("asked-134", R"("input_tokens": 500, "output_tokens": 134, "total_input_tokens": 30000, "total_output_tokens": 8040)") << ", "
                                     << run("sharegpt", R"("dataset": "sharegpt", "kv_cache_dtype": "fp8_e4m3")") << ", "
                                     << run("elsewhere", R"("dataset": "../sharegpt")") << "]}";
    const std::vector<fidelity::ServingRunRecord> runs = fidelity::load_serving_runs(dir);
    BOOST_TEST_REQUIRE(runs.size() == 4u);
    BOOST_TEST(runs[2].shape_input_lens.size() == 3u);
    BOOST_TEST(runs[2].shape_output_lens[0] == 300);
    BOOST_TEST(runs[2].kv_cache_dtype == "fp8_e4m3");
    BOOST_TEST(runs[3].shape_input_lens.empty());  // a dataset name never leaves the folder
    BOOST_TEST_REQUIRE(runs[0].figures.size() == 1u);
    BOOST_TEST(runs[0].figures[0].figure == "total_tokens_per_s");
    const fidelity::ServingFitReport r = fidelity::fit_serving(runs, bundled_inputs(), false);
    BOOST_TEST(r.runs_used == 3);  // "elsewhere" states no lengths and has no sample
    std::map<std::string, double> predicted;
    for (const fidelity::ServingPoint& pt : r.points) predicted[pt.run] = pt.fitted;
    BOOST_TEST_REQUIRE(predicted.count("asked-200") == 1u);
    BOOST_TEST(predicted.at("asked-200") == predicted.at("asked-134"));
    BOOST_TEST(predicted.at("sharegpt") > 0);
    std::filesystem::remove_all(dir);
}

// Set-ups the replay does not model are not replayed, each with its reason, instead of being priced
// as plain tensor parallelism (a PP 2 run on two GPUs replayed on one); a run the corpus sets apart
// (setup.not_replayed_because) is not replayed either; a file's source is its repository.
BOOST_AUTO_TEST_CASE(set_ups_the_replay_does_not_model_are_not_replayed) {
    const auto dir = std::filesystem::temp_directory_path() / "quantplan-serving-runs-refused";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto run = [](const std::string& name, const std::string& extra, const std::string& version = "0.11.0") {
        return R"({"metric": "requests_per_s", "value": 10, "unit": "req/s", "setup": {"run": ")" + name +
               R"(", "engine": "vllm", "engine_version": ")" + version +
               R"(", "gpu": "h100-sxm", "model": "qwen3-8b", "scheme": "bf16", "num_prompts": 40, "input_tokens": 200, "output_tokens": 20)" + extra + "}}";
    };
    std::ofstream(dir / "a.json") << R"({"format": "quantplan-measurements/1", "source": {"repository": "lab/pages"}, "records": [)"
                                  << run("plain", "") << ", " << run("pp2", R"(, "pipeline_parallel": 2)") << ", "
                                  << run("dp2", R"(, "data_parallel": 2)") << ", " << run("dpa", R"(, "dp_attention": true)") << ", "
                                  << run("ep", R"(, "expert_parallel": true)") << ", " << run("mtp", R"(, "speculative_decoding": true)") << ", "
                                  << run("multistep", R"(, "num_scheduler_steps": 10)") << ", " << run("steps1", R"(, "num_scheduler_steps": 1, "pipeline_parallel": 1)") << ", "
                                  << run("apart", R"(, "not_replayed_because": "figures the client defines otherwise")") << ", "
                                  << run("multistep-v0", R"(, "num_scheduler_steps": 10)", "0.6.0") << "]}";
    std::ofstream(dir / "b.json") << R"({"format": "quantplan-measurements/1", "records": [)" << run("other", "") << "]}";
    const std::vector<fidelity::ServingRunRecord> runs = fidelity::load_serving_runs(dir);
    BOOST_TEST_REQUIRE(runs.size() == 11u);
    BOOST_TEST(runs[0].source == "lab/pages");
    BOOST_TEST(runs[10].source == "b.json");  // no repository: the file is the source
    const fidelity::ServingFitReport r = fidelity::fit_serving(runs, bundled_inputs(), false);
    BOOST_TEST(r.runs_used == 4);  // plain, steps1, multistep-v0 (V0's windows) and other
    BOOST_TEST(r.skipped.at("pipeline parallelism (not modelled by the replay)") == 1);
    BOOST_TEST(r.skipped.at("data parallelism or DP attention (not modelled by the replay)") == 2);
    BOOST_TEST(r.skipped.at("expert parallelism (not modelled by the replay)") == 1);
    BOOST_TEST(r.skipped.at("speculative decoding (not modelled by the replay)") == 1);
    BOOST_TEST(r.skipped.at("multi-step scheduling where the replay has none (not vLLM V0 0.5.5 on, chunked prefill, or above 64 steps)") == 1);  // at 0.11.0, a V1 version
    BOOST_TEST(r.skipped.at("set apart by the corpus (setup.not_replayed_because)") == 1);
    // A value of another type is an error naming the key, not a run replayed as plain TP.
    for (const auto& [extra, key] : {std::pair{R"(, "pipeline_parallel": "2")", "pipeline_parallel"}, {R"(, "dp_attention": 1)", "dp_attention"},
                                     {R"(, "speculative_decoding": "true")", "speculative_decoding"}, {R"(, "not_replayed_because": true)", "not_replayed_because"}}) {
        std::ofstream(dir / "b.json") << R"({"format": "quantplan-measurements/1", "records": [)" << run("typed", extra) << "]}";
        BOOST_TEST(quantplan::test::throws_naming([&] { fidelity::load_serving_runs(dir); }, key), key);
    }
    std::filesystem::remove_all(dir);
}

// Leave-one-source-out holds a repository's files out together: two files of one repository are
// one fold, so each is predicted with terms fitted without the other (their shared host terms
// then come from the third file alone), where a fold per file would fit each on its sibling.
BOOST_AUTO_TEST_CASE(a_repository_is_held_out_as_one_source) {
    const auto dir = std::filesystem::temp_directory_path() / "quantplan-serving-runs-folds";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto run = [](const std::string& name, int prompts, double rate) {
        return R"({"metric": "requests_per_s", "value": )" + std::to_string(rate) + R"(, "unit": "req/s", "setup": {"run": ")" + name +
               R"(", "engine": "vllm", "engine_version": "0.11.0", "gpu": "h100-sxm", "model": "qwen3-8b", "scheme": "bf16", "num_prompts": )" +
               std::to_string(prompts) + R"(, "input_tokens": 200, "output_tokens": 20}})";
    };
    std::ofstream(dir / "a.json") << R"({"format": "quantplan-measurements/1", "source": {"repository": "lab/pages"}, "records": [)" << run("a", 400, 30) << "]}";
    std::ofstream(dir / "b.json") << R"({"format": "quantplan-measurements/1", "source": {"repository": "lab/pages"}, "records": [)" << run("b", 400, 30) << "]}";
    std::ofstream(dir / "c.json") << R"({"format": "quantplan-measurements/1", "source": {"repository": "other/repo"}, "records": [)" << run("c", 400, 90) << "]}";
    const fidelity::ServingFitReport r = fidelity::fit_serving(fidelity::load_serving_runs(dir), bundled_inputs(), true);
    BOOST_TEST_REQUIRE(r.points.size() == 3u);
    std::map<std::string, const fidelity::ServingPoint*> by_run;
    for (const fidelity::ServingPoint& pt : r.points) by_run[pt.run] = &pt;
    // a and b, held out together, are predicted alike (terms fitted on c alone), and differently
    // from leave-one-out, where each is fitted with its twin.
    BOOST_TEST(by_run.at("a")->loso == by_run.at("b")->loso);
    BOOST_TEST(std::abs(by_run.at("a")->loso / by_run.at("a")->loo - 1) > 1e-6);
    std::filesystem::remove_all(dir);
}

// A serial frontend stage caps a replica at 1 / serial requests/s: the highest rate any run
// measured bounds the serial time the fit may take (the guard above checks the committed fit).
BOOST_AUTO_TEST_CASE(the_frontend_serial_bound_is_the_fastest_measured_rate) {
    fidelity::ServingRunRecord slow, fast, none;
    slow.figures = {{"requests_per_s", "", 250.0, "a"}, {"ttft_s", "mean", 1.0, "b"}};
    fast.figures = {{"requests_per_s", "", 1000.0, "c"}};
    none.figures = {{"ttft_s", "mean", 1.0, "d"}};
    BOOST_TEST(fidelity::frontend_serial_bound_s({&slow, &fast}) == 1e-3, boost::test_tools::tolerance(1e-12));
    // A rate of 0 or infinity (a failed or empty run as a file may hold it) bounds nothing.
    fidelity::ServingRunRecord zero, infinite;
    zero.figures = {{"requests_per_s", "", 0.0, "e"}};
    infinite.figures = {{"requests_per_s", "", std::numeric_limits<double>::infinity(), "f"}};
    BOOST_TEST(fidelity::frontend_serial_bound_s({&slow, &zero, &infinite}) == 4e-3, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(std::isinf(fidelity::frontend_serial_bound_s({&zero, &infinite})));
    BOOST_TEST(fidelity::frontend_serial_bound_s({&slow}) == 4e-3, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(std::isinf(fidelity::frontend_serial_bound_s({&none})));
    BOOST_TEST(std::isinf(fidelity::frontend_serial_bound_s({})));
}

BOOST_AUTO_TEST_SUITE_END()
