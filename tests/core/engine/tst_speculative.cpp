// Speculative decoding: parsing, the acceptance model, the verify step, the draft in the memory
// budget, the batch where it stops paying, the simulator's draws, and the fit's guard.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/check/startup_log.h"
#include "core/engine/speculative.h"
#include "core/fidelity/spec_fit.h"
#include "core/plan/plan.h"
#include "core/serve/simulator.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::engine;

namespace {

const std::filesystem::path spec_engines_file() { return test::source_dir() / "assets" / "engines" / "speculative" / "speculative.json"; }
const std::filesystem::path spec_corpus_file() {
    return test::source_dir() / "assets" / "measurements" / "speculative" / "speculative-decoding.json";
}

const EngineCatalog& fitted_catalog() {
    static const EngineCatalog c = load_engine_catalog(test::source_dir() / "assets" / "engines" / "profiles",
                                                       test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    return c;
}

const SpecCatalog& spec_catalog() {
    static const SpecCatalog c = load_spec_catalog(spec_engines_file().string(), spec_corpus_file().string());
    return c;
}

PlanRequest engine_request(const std::string& model, const std::string& gpu, const std::string& engine, std::int64_t batch,
                           std::int64_t context) {
    PlanRequest r;
    r.model = test::bundled_model(model);
    r.gpu = test::bundled_gpu(gpu);
    r.efficiency = builtin_efficiency_profile("realistic");
    r.workload.batch = batch;
    r.workload.context_tokens = context;
    r.workload.kv = parse_kv_format("bf16");
    r.engine = make_engine_setup(fitted_catalog(), engine, true);
    r.engine->profile.defaults =
        defaults_for_run(r.engine->profile, r.gpu.id, r.gpu.memory_usable_bytes, r.engine->choice.version_asked, context);
    const EngineDefaults& d = r.engine->profile.defaults;
    r.workload.engine.gpu_memory_utilization = d.gpu_memory_utilization;
    r.workload.engine.max_num_seqs = d.max_num_seqs;
    r.workload.engine.max_num_batched_tokens = d.max_num_batched_tokens;
    r.workload.engine.kv_block_tokens = d.block_size_tokens;
    r.crossover_max_batch = 1024;
    return r;
}

SpecPlanRequest eagle3(std::int64_t k, const std::string& acceptance) {
    SpecPlanRequest s;
    s.request = parse_spec("eagle3:" + std::to_string(k));
    s.acceptance = parse_acceptance(acceptance, k);
    s.terms = load_spec_terms((test::source_dir() / "assets" / "engines" / "fit" / "spec-fit.json").string(), "vllm");
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(speculative)

BOOST_AUTO_TEST_CASE(spec_and_acceptance_parse_and_refuse_with_the_option_named) {
    const SpecRequest e = parse_spec("eagle3:3");
    BOOST_TEST(static_cast<int>(e.method) == static_cast<int>(SpecMethod::Eagle3));
    BOOST_TEST(e.k == 3);
    const SpecRequest dm = parse_spec("draft:qwen3-0.6b:4");
    BOOST_TEST(dm.draft_model == "qwen3-0.6b");
    BOOST_TEST(dm.k == 4);
    BOOST_TEST(test::throws_naming([] { parse_spec("eagle3:0"); }, "--spec: K must be at least 1"));
    BOOST_TEST(test::throws_naming([] { parse_spec("medusa:3"); }, "--spec: unknown method 'medusa'"));
    BOOST_TEST(test::throws_naming([] { parse_spec("eagle3"); }, "--spec: 'eagle3' is not METHOD:K"));
    BOOST_TEST(test::throws_naming([] { parse_spec("eagle3:2x"); }, "is not a whole number"));
    BOOST_TEST(test::throws_naming([] { parse_spec("eagle3:999"); }, "is above 128"));
    BOOST_TEST(test::throws_naming([] { parse_acceptance("0.8,1.2,0.3", 3); }, "outside [0, 1]"));
    BOOST_TEST(test::throws_naming([] { parse_acceptance("0.5,0.6,0.3", 3); }, "is above the one before"));
    BOOST_TEST(test::throws_naming([] { parse_acceptance("4.5", 3); }, "above K + 1 = 4"));
    BOOST_TEST(test::throws_naming([] { parse_acceptance("0.8,0.6", 3); }, "2 per-position rates for K = 3"));
    BOOST_TEST(test::throws_naming([] { parse_acceptance("-0.2", 1); }, "outside [0, 1]"));
    // One number: a mean length (>= 1), or the only position's rate when K is 1.
    BOOST_TEST(parse_acceptance("2.5", 3).mean_length() == 2.5, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(parse_acceptance("0.7", 1).mean_length() == 1.7, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(acceptance_lengths_rates_and_draws_agree) {
    const Acceptance a = acceptance_from_mean_length(2.6, 4);
    BOOST_TEST(a.mean_length() == 2.6, boost::test_tools::tolerance(1e-9));
    // One conditional rate: p_i = a^i.
    const double r = a.per_position[0];
    for (std::size_t i = 1; i < a.per_position.size(); ++i)
        BOOST_TEST(a.per_position[i] == std::pow(r, static_cast<double>(i + 1)), boost::test_tools::tolerance(1e-9));
    // Truncated and extended at the last conditional rate.
    const Acceptance three = parse_acceptance("0.8,0.6,0.45", 3);
    BOOST_TEST(acceptance_for_k(three, 2).mean_length() == 2.4, boost::test_tools::tolerance(1e-12));
    const Acceptance five = acceptance_for_k(three, 5);
    BOOST_TEST(five.per_position[3] == 0.45 * 0.75, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(five.source.find("taken at K = 5") != std::string::npos);
    // Draws: the mean of the accepted counts over a uniform grid is sum p_i.
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) sum += static_cast<double>(accepted_tokens(three, (i + 0.5) / n));
    BOOST_TEST(sum / n == 1.85, boost::test_tools::tolerance(1e-4));
}

BOOST_AUTO_TEST_CASE(a_verify_step_of_one_token_is_the_decode_step_and_more_tokens_cost_more) {
    const PlanRequest q = engine_request("llama-3.1-8b", "h100-sxm", "vllm", 8, 2048);
    const std::vector<TensorInfo> inv = compress_inventory(tensor_inventory(q.model));
    const SchemeCosts c = scheme_costs(q.model, inv, parse_scheme("bf16"), q.workload.kv, q.gpu);
    const StepLookups k = resolve_step_lookups(c, q.model, q.gpu, *q.engine, q.workload);
    const EngineStep one = engine_decode_step(k, c, q.model, q.gpu, *q.engine, q.workload, 8, 2048);
    const EngineStep four = engine_decode_step(k, c, q.model, q.gpu, *q.engine, q.workload, 8, 2048, 4);
    // Memory-bound at batch 8: scoring 4 tokens per sequence costs far less than 4 decode steps (the
    // kernel curves may even price its larger GEMM faster; a speculative step never is:
    // engine_spec_step holds its verify at the plain step at least).
    BOOST_TEST(four.time_s < 1.5 * one.time_s);
    BOOST_TEST(four.roofline.linear_flop == 4 * one.roofline.linear_flop, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(four.roofline.kv_bytes == one.roofline.kv_bytes);  // each sequence's cache read once
    // The roofline counts each sequence's cache once.
    const DecodeStep r1 = decode_step(c, q.gpu, q.efficiency, q.workload, 8, 2048);
    const DecodeStep r4 = verify_step(c, q.gpu, q.efficiency, q.workload, 8, 4, 2048);
    BOOST_TEST(r4.kv_bytes == r1.kv_bytes);
    BOOST_TEST(r4.linear_flop == 4 * r1.linear_flop, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(the_draft_is_in_the_budget_and_the_crossover_moves_with_the_scheme) {
    PlanRequest q = engine_request("llama-3.1-8b", "h100-sxm", "vllm", 1, 512);
    q.schemes = {parse_scheme("bf16"), parse_scheme("w4a16-g128")};
    const PlanResult plain = plan(q);
    q.spec = eagle3(3, "0.8,0.6,0.45");
    const PlanResult spec = plan(q);
    BOOST_REQUIRE(spec.speculation.size() == 2);
    // The head's weights leave less for the KV cache, and each sequence holds K + K more slots.
    BOOST_TEST(spec.schemes[0].admission.weight_bytes == plain.schemes[0].admission.weight_bytes + spec.speculation[0].draft.weight_bytes);
    BOOST_TEST(spec.schemes[0].admission.kv_cache_tokens < plain.schemes[0].admission.kv_cache_tokens);
    BOOST_TEST(spec.speculation[0].draft.weight_bytes > 1'000'000'000u);  // one layer, fc and a 128k lm_head in bf16
    // It pays at batch 1 and stops paying at some batch; the 4-bit weights, cheaper to read,
    // leave less memory-bound slack, so speculation stops paying at a smaller batch.
    BOOST_TEST(spec.speculation[0].at_batch.speedup > 1.3);
    BOOST_REQUIRE(spec.speculation[1].stops_paying_batch.has_value());
    if (spec.speculation[0].stops_paying_batch) BOOST_TEST(*spec.speculation[1].stops_paying_batch < *spec.speculation[0].stops_paying_batch);
    const std::int64_t b = *spec.speculation[1].stops_paying_batch;
    for (const SpecPoint& p : spec.speculation[1].points) {
        if (p.batch < b) BOOST_TEST(p.speedup >= 1.0);
        if (p.batch == b) BOOST_TEST(p.speedup < 1.0);
    }
    // Throughput with and without, per batch, consistent with the TPOTs.
    for (const SpecPoint& p : spec.speculation[0].points) BOOST_TEST(p.tokens_per_s == p.batch / p.tpot_s, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(engine_versions_refuse_what_they_cannot_run) {
    const ModelConfig llama = test::bundled_model("llama-3.1-8b");
    const ModelConfig qwen06 = test::bundled_model("qwen3-0.6b");
    const ModelConfig deepseek = test::bundled_model("deepseek-v3");
    BOOST_TEST(test::throws_naming([&] { check_spec_request(parse_spec("eagle3:3"), llama, nullptr, &spec_catalog(), "vllm", "0.8.3"); },
                                   "eagle3 speculative decoding does not run in vllm 0.8.3 (it does from 0.8.5)"));
    BOOST_TEST(test::throws_naming([&] { check_spec_request(parse_spec("eagle3:40"), llama, nullptr, &spec_catalog(), "vllm", "0.9.0"); },
                                   "above vllm 0.9.0's limit of 32"));
    BOOST_TEST(test::throws_naming([&] { check_spec_request(parse_spec("mtp:2"), llama, nullptr, &spec_catalog(), "vllm", ""); },
                                   "has no MTP layers"));
    BOOST_TEST(test::throws_naming([&] { check_spec_request(parse_spec("draft:qwen3-0.6b:4"), llama, &qwen06, &spec_catalog(), "vllm", ""); },
                                   "must share the target's vocabulary"));
    check_spec_request(parse_spec("mtp:1"), deepseek, nullptr, &spec_catalog(), "sglang", "");
    check_spec_request(parse_spec("eagle3:7"), llama, nullptr, &spec_catalog(), "vllm", "0.11.0");
}

BOOST_AUTO_TEST_CASE(published_acceptance_defaults_name_their_record) {
    const std::optional<Acceptance> a = default_acceptance(spec_catalog(), test::bundled_model("llama-3.1-8b"), SpecMethod::Eagle3, 3);
    BOOST_REQUIRE(a.has_value());
    BOOST_TEST(a->source.find("default: llama-3.1-8b eagle3") != std::string::npos);
    BOOST_TEST(a->source.find("speculative-decoding/") != std::string::npos);
    // A family prefix: the 70B Llama 3.3 entry serves llama-3.3-70b-instruct by name.
    BOOST_TEST(default_acceptance(spec_catalog(), test::bundled_model("deepseek-v3"), SpecMethod::Mtp, 1).has_value());
    BOOST_TEST(!default_acceptance(spec_catalog(), test::bundled_model("mistral-7b-instruct-v0.2"), SpecMethod::Eagle3, 3).has_value());
}

BOOST_AUTO_TEST_CASE(the_simulator_draws_the_acceptance_and_is_deterministic_for_a_seed) {
    serve::EngineLimits limits;
    limits.max_num_seqs = 8;
    limits.max_num_batched_tokens = 4096;
    limits.kv_cache_tokens = 1 << 18;
    limits.speculative_tokens = 3;
    limits.acceptance = {0.8, 0.6, 0.45};
    limits.spec_seed = 7;
    const serve::StepCost cost = [](const serve::StepShape& s) { return 0.01 + 0.001 * static_cast<double>(s.speculative_tokens); };
    const std::vector<serve::Request> reqs = serve::poisson_requests(200, 5.0, 100, 400, 3);
    const serve::SimulationResult a = serve::simulate(reqs, limits, cost, 50'000'000, 0, 64);
    const serve::SimulationResult b = serve::simulate(reqs, limits, cost, 50'000'000, 0, 64);
    BOOST_TEST(a.end_s == b.end_s);
    BOOST_TEST(a.accepted_tokens == b.accepted_tokens);
    // The realised mean acceptance length is the published one (within draw noise), and every
    // request gets exactly its output.
    BOOST_TEST(a.tokens_per_decode_step == 2.85, boost::test_tools::tolerance(0.03));
    for (const serve::RequestResult& r : a.requests) BOOST_TEST(r.output_tokens == 400);
    bool marked = false;
    for (const serve::TimelinePoint& p : a.timeline) marked = marked || p.tokens_per_sequence > 1.0;
    BOOST_TEST(marked);
    // Faster than without speculation at the same cost per step.
    serve::EngineLimits off = limits;
    off.speculative_tokens = 0;
    off.acceptance.clear();
    const serve::SimulationResult c = serve::simulate(reqs, off, cost, 50'000'000, 0, 0);
    BOOST_TEST(a.requests[0].tpot_s() < c.requests[0].tpot_s());
    // Another seed, other draws.
    limits.spec_seed = 8;
    BOOST_TEST(serve::simulate(reqs, limits, cost).accepted_tokens != a.accepted_tokens);
}

// The startup-log reader takes the speculative config from SGLang's ServerArgs and vLLM V0's args,
// and the acceptance from each engine's metric lines (formats: docs/speculative-sources.md).
BOOST_AUTO_TEST_CASE(logs_give_the_speculative_config_and_the_measured_acceptance) {
    const check::StartupLog sg = check::read_startup_log(
        "server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=1, speculative_algorithm='EAGLE3', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)\n"
        "KV Cache is allocated. #tokens: 400000, K size: 24.41 GB, V size: 24.41 GB\n"
        "Decode batch. #running-req: 8, #token: 4096, token usage: 0.01, accept len: 2.50, cuda graph: True, gen throughput (token/s): 900.0\n"
        "Decode batch. #running-req: 8, #token: 4200, token usage: 0.01, accept len: 3.10, cuda graph: True, gen throughput (token/s): 950.0\n",
        "sglang.log");
    BOOST_TEST(sg.speculative_method == "eagle3");
    BOOST_TEST(sg.speculative_tokens.value_or(0) == 3);
    BOOST_TEST(sg.spec_metric_lines == 2);
    BOOST_TEST(sg.spec_mean_acceptance_length.value_or(0) == 2.8, boost::test_tools::tolerance(1e-9));
    const check::StartupLog v0 = check::read_startup_log(
        "INFO 05-01 10:00:00 api_server.py:219] args: Namespace(model='meta-llama/Meta-Llama-3-70B-Instruct', speculative_model='[ngram]', "
        "num_speculative_tokens=5, ngram_prompt_lookup_max=4, tensor_parallel_size=4)\n"
        "INFO 05-01 10:00:10 executor_base.py:47] # GPU blocks: 10000, # CPU blocks: 2048\n"
        "INFO 05-01 10:05:00 metrics.py:455] Speculative metrics: Draft acceptance rate: 0.500, System efficiency: 0.400, Number of speculative "
        "tokens: 5, Number of accepted tokens: 5000, Number of draft tokens: 10000, Number of emitted tokens: 9000.\n",
        "v0.log");
    BOOST_TEST(v0.speculative_method == "ngram");
    BOOST_TEST(v0.speculative_tokens.value_or(0) == 5);
    // Cumulative counts: 1 + accepted x K / drafted tokens per step.
    BOOST_TEST(v0.spec_mean_acceptance_length.value_or(0) == 3.5, boost::test_tools::tolerance(1e-9));
}

// The committed fit is the fit of the corpus, and its leave-one-out median |error| of the speed-up
// holds (at most 15%, and not 2 points above the committed figure).
BOOST_AUTO_TEST_CASE(the_committed_spec_fit_is_the_fit_of_the_corpus_and_holds_its_median) {
    fidelity::SpecFitInputs in;
    in.models_dir = test::models_dir();
    in.gpus = load_gpu_profiles(test::gpus_dir());
    in.catalog = &fitted_catalog();
    const fidelity::SpecFidelity f = fidelity::evaluate_spec_fidelity(fidelity::spec_runs(spec_corpus_file(), in));
    std::ifstream file(test::source_dir() / "assets" / "engines" / "fit" / "spec-fit.json");
    const nlohmann::json committed = nlohmann::json::parse(file);
    BOOST_TEST(f.usable >= 20u);
    BOOST_TEST(f.median_abs_loo <= 0.15);
    BOOST_TEST(f.median_abs_loo <= committed["speedup_error"]["median_abs_loo"].get<double>() + 0.02);
    for (const auto& [engine, t] : f.terms) {
        BOOST_TEST(t.draft_forward_s == committed["engines"][engine]["draft_forward_s"].get<double>(), boost::test_tools::tolerance(1e-9));
        BOOST_TEST(t.host_per_sequence_s == committed["engines"][engine]["host_per_sequence_s"].get<double>(), boost::test_tools::tolerance(1e-9));
    }
}

BOOST_AUTO_TEST_SUITE_END()
