// The engine registry: the data is stamped and complete, the compiled-in copy equals the assets,
// and replaying the engines' decisions gives what ../shared/reference/engines.md and seed 000 say.
#include <fstream>
#include <set>
#include <sstream>

#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "core/checkpoint/quant_config.h"
#include "core/plan/plan.h"
#include "core/quant_methods/registry.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::test;
namespace bdata = boost::unit_test::data;

namespace {

const EngineSnapshot& snap(const char* id) {
    const EngineSnapshot* s = builtin_engine_registry().find(id);
    BOOST_TEST_REQUIRE(s != nullptr, id);
    return *s;
}

EngineGpu cuda(int cc) { return EngineGpu{"sm_" + std::to_string(cc), true, cc}; }

EngineQuery query(const char* method) {
    EngineQuery q;
    q.method = method;
    return q;
}

EngineQuery gptq4(std::int64_t group = 128) {
    EngineQuery q = query("gptq");
    q.bits = 4;
    q.group_size = group;
    q.symmetric = true;
    return q;
}

EngineQuery awq4() {
    EngineQuery q = query("awq");
    q.bits = 4;
    q.group_size = 128;
    q.zero_point = true;
    q.symmetric = false;
    return q;
}

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
    for (const std::string& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += x + " | ";
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_registry)

BOOST_AUTO_TEST_CASE(the_compiled_in_registry_equals_the_assets) {
    const auto& texts = builtin_engine_registry_texts();
    BOOST_TEST(texts.size() == 2u);
    for (const auto& [name, text] : texts) {
        std::ifstream in(source_dir() / "assets" / "engines" / name, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        BOOST_TEST(ss.str() == std::string(text), name << " differs from the compiled-in copy: re-run CMake");
    }
    const EngineRegistry loaded = load_engine_registry(source_dir() / "assets" / "engines");
    BOOST_TEST(loaded.snapshots.size() == builtin_engine_registry().snapshots.size());
}

BOOST_AUTO_TEST_CASE(every_fact_is_stamped_with_a_version_and_a_file) {
    const EngineRegistry& reg = builtin_engine_registry();
    BOOST_TEST(reg.latest("vllm")->id == "vllm-B");
    BOOST_TEST(reg.latest("sglang")->id == "sglang-B");
    BOOST_TEST(reg.complete().size() == 4u);
    for (const EngineSnapshot& s : reg.snapshots) {
        BOOST_TEST(!s.repository.empty(), s.id);
        BOOST_TEST(!s.version.empty(), s.id);
        BOOST_TEST(!s.reference.empty(), s.id);
        if (!s.complete) {
            BOOST_TEST(!s.notes.empty(), s.id << ": a partial snapshot says what it knows");
            continue;
        }
        BOOST_TEST(!s.commit.empty(), s.id);
        BOOST_TEST(!s.methods_file.empty(), s.id);
        BOOST_TEST(!s.kv_cache_file.empty(), s.id);
        BOOST_TEST(!s.kv_cache_dtypes.empty(), s.id);
        BOOST_TEST(!s.capability_message.empty(), s.id);
        for (const KernelRule& k : s.kernels) {
            BOOST_TEST(!k.file.empty(), s.id << " " << k.method << " " << k.kernel);
            BOOST_TEST(std::string(kernel_class_name(k.kernel_class)) != "unknown", s.id << " " << k.method);
            BOOST_TEST((k.verified || !k.note.empty()), s.id << " " << k.method << ": an assumed row says why");
        }
        for (const ConversionRule& c : s.conversions) {
            BOOST_TEST(!c.file.empty(), s.id << " " << c.from);
            BOOST_TEST(s.registers(c.to), s.id << ": converts to an unregistered " << c.to);
        }
        for (const auto& [key, format_names] : s.kv_cache_formats)
            for (const std::string& n : format_names) BOOST_TEST(std::count(s.kv_cache_dtypes.begin(), s.kv_cache_dtypes.end(), n) == 1, s.id << " " << n);
    }
}

BOOST_AUTO_TEST_CASE(method_name_lists_match_the_reference) {
    BOOST_TEST(snap("vllm-A").methods.size() == 28u);
    BOOST_TEST(snap("vllm-B").methods.size() == 30u);
    BOOST_TEST(snap("sglang-A").methods.size() == 27u);
    BOOST_TEST(snap("sglang-B").methods.size() == 29u);
    // vLLM-B dropped bitblas, hqq, ipex, ...; added auto_gptq, mxfp8, ...
    BOOST_TEST(snap("vllm-A").registers("hqq"));
    BOOST_TEST(!snap("vllm-B").registers("hqq"));
    BOOST_TEST(snap("vllm-B").registers("auto_gptq"));
    BOOST_TEST(snap("vllm-A").kv_cache_dtypes.size() == 6u);
    BOOST_TEST(snap("vllm-B").kv_cache_dtypes.size() == 15u);
    BOOST_TEST(snap("sglang-A").kv_cache_dtypes.size() == 3u);
    BOOST_TEST(snap("sglang-B").kv_cache_dtypes.size() == 9u);  // seed 000: nine --kv-cache-dtype choices
}

BOOST_AUTO_TEST_CASE(sglang_b_leaves_the_seeds_twelve_methods_out_of_its_optimized_list) {
    // Seed 000: 12 real method names are absent from optimized_quantization_methods, including
    // awq, gptq, bitsandbytes, gguf and mxfp4.
    const EngineSnapshot& s = snap("sglang-B");
    BOOST_TEST_REQUIRE(s.optimized.has_value());
    std::set<std::string> outside;
    for (const std::string& m : s.methods)
        if (std::find(s.optimized->begin(), s.optimized->end(), m) == s.optimized->end()) outside.insert(m);
    const std::set<std::string> expected{"mxfp8", "blockwise_int8", "modelopt", "awq", "bitsandbytes", "gguf", "gptq", "auto-round", "auto-round-int8",
                                         "quark_int4fp8_moe", "mxfp_w4a8", "mxfp4"};
    BOOST_TEST(outside == expected, "outside the optimized list: " << outside.size());
}

BOOST_AUTO_TEST_CASE(gptq_becomes_gptq_marlin_where_marlin_applies) {
    const EngineSnapshot& a = snap("vllm-A");
    // H100: gptq -> gptq_marlin -> Machete (group 128, K%64, N%128).
    EngineQuery q = gptq4();
    q.n = 4096;
    q.k = 4096;
    EngineResolution r = resolve_engine(a, q, cuda(90));
    BOOST_TEST(r.resolved_method == "gptq_marlin");
    BOOST_TEST(r.kernel == "Machete");
    BOOST_TEST(std::string(kernel_class_name(r.kernel_class)) == "fused");
    // Group 32 is not a Machete group: Marlin.
    r = resolve_engine(a, gptq4(32), cuda(90));
    BOOST_TEST(r.kernel == "Marlin");
    // A100: Marlin.
    r = resolve_engine(a, gptq4(), cuda(80));
    BOOST_TEST(r.resolved_method == "gptq_marlin");
    BOOST_TEST(r.kernel == "Marlin");
    // 3-bit or asymmetric GPTQ is not Marlin-compatible in A: the generic path.
    EngineQuery three = gptq4();
    three.bits = 3;
    r = resolve_engine(a, three, cuda(90));
    BOOST_TEST(r.resolved_method == "gptq");
    BOOST_TEST(std::string(kernel_class_name(r.kernel_class)) == "generic");
    BOOST_TEST(any_contains(r.notes, "generic"));
    // Turing (sm_75): below Marlin's 80 in A, gptq stays gptq.
    r = resolve_engine(a, gptq4(), cuda(75));
    BOOST_TEST(r.resolved_method == "gptq");
    BOOST_TEST(!r.refused);
    // B: every GPTQ checkpoint is auto_gptq, Marlin from 75.
    r = resolve_engine(snap("vllm-B"), gptq4(), cuda(75));
    BOOST_TEST(r.resolved_method == "auto_gptq");
    BOOST_TEST(r.kernel == "Marlin");
    // SGLang: a Marlin-format GPTQ checkpoint is not converted again.
    EngineQuery marlin = gptq4();
    marlin.checkpoint_format = "marlin";
    r = resolve_engine(snap("sglang-A"), marlin, cuda(90));
    BOOST_TEST(r.resolved_method == "gptq");
}

BOOST_AUTO_TEST_CASE(awq_becomes_awq_marlin_on_cuda_and_on_rocm_in_b) {
    EngineResolution r = resolve_engine(snap("vllm-A"), awq4(), cuda(89));
    BOOST_TEST(r.resolved_method == "awq_marlin");
    BOOST_TEST(r.kernel == "Marlin");
    const EngineGpu rocm{"MI300X", false, 0};
    r = resolve_engine(snap("vllm-A"), awq4(), rocm);
    BOOST_TEST(r.resolved_method == "awq");
    BOOST_TEST(std::string(kernel_class_name(r.kernel_class)) == "generic");
    r = resolve_engine(snap("vllm-B"), awq4(), rocm);
    BOOST_TEST(r.resolved_method == "awq_marlin");
    // B routes AWQ through the chooser: Machete on sm_90.
    r = resolve_engine(snap("vllm-B"), awq4(), cuda(90));
    BOOST_TEST(r.kernel == "Machete");
    // AWQ without zero points is not Marlin-compatible.
    EngineQuery nz = awq4();
    nz.zero_point = false;
    r = resolve_engine(snap("vllm-A"), nz, cuda(90));
    BOOST_TEST(r.resolved_method == "awq");
}

BOOST_AUTO_TEST_CASE(sglang_warns_as_the_engine_does_for_methods_outside_its_optimized_list) {
    const std::string warning = "awq quantization is not fully optimized yet. The speed can be slower than non-quantized models.";
    // On an AMD GPU AWQ is not converted: SGLang logs its warning.
    EngineResolution r = resolve_engine(snap("sglang-B"), awq4(), EngineGpu{"MI300X", false, 0});
    BOOST_TEST(r.optimized.value_or(true) == false);
    BOOST_TEST(any_contains(r.warnings, warning), joined(r.warnings));
    // On an H100 it is awq_marlin, optimized, silent.
    r = resolve_engine(snap("sglang-B"), awq4(), cuda(90));
    BOOST_TEST(r.optimized.value_or(false));
    BOOST_TEST(r.warnings.empty(), joined(r.warnings));
    // vLLM has no optimized list any more (#25012).
    r = resolve_engine(snap("vllm-B"), awq4(), EngineGpu{"MI300X", false, 0});
    BOOST_TEST(!r.optimized.has_value());
    // MXFP4 warns except on SM100, where B exempts it.
    EngineQuery mx = query("mxfp4");
    mx.bits = 4;
    mx.weight_float = true;
    BOOST_TEST(any_contains(resolve_engine(snap("sglang-B"), mx, cuda(90)).warnings, "mxfp4 quantization is not fully optimized"));
    BOOST_TEST(resolve_engine(snap("sglang-B"), mx, cuda(100)).warnings.empty());
}

BOOST_AUTO_TEST_CASE(capability_gates_refuse_with_the_engines_message) {
    EngineQuery mo = query("modelopt");
    mo.bits = 8;
    mo.weight_float = true;
    mo.quant_algo = "FP8";
    mo.activation = "fp8";
    const EngineResolution r = resolve_engine(snap("vllm-A"), mo, cuda(80));
    BOOST_TEST(r.refused);
    BOOST_TEST(any_contains(r.errors, "The quantization method modelopt is not supported for the current GPU. Minimum capability: 89. Current capability: 80."),
               joined(r.errors));
    // SGLang's w8a8_fp8 needs 89.
    EngineQuery w8 = query("w8a8_fp8");
    w8.bits = 8;
    BOOST_TEST(resolve_engine(snap("sglang-A"), w8, cuda(80)).refused);
    BOOST_TEST(!resolve_engine(snap("sglang-A"), w8, cuda(89)).refused);
}

BOOST_AUTO_TEST_CASE(fp8_kernels_follow_the_gpu) {
    EngineQuery q = query("fp8");
    q.bits = 8;
    q.weight_float = true;
    q.activation = "fp8";
    BOOST_TEST(resolve_engine(snap("vllm-A"), q, cuda(80)).kernel == "Marlin W8A16 (FP8 weights)");
    BOOST_TEST(std::string(kernel_class_name(resolve_engine(snap("vllm-A"), q, cuda(90)).kernel_class)) == "native");
    q.block = true;
    q.group_size = 128;
    q.n = 4096;
    q.k = 4096;
    BOOST_TEST(resolve_engine(snap("vllm-A"), q, cuda(90)).kernel == "DeepGEMM");
    BOOST_TEST(resolve_engine(snap("vllm-A"), q, cuda(89)).kernel == "Triton block FP8");
    BOOST_TEST(resolve_engine(snap("sglang-A"), q, cuda(89)).kernel == "Triton block FP8");
    // N not a multiple of 128: no DeepGEMM, CUTLASS block.
    q.n = 4000;
    BOOST_TEST(resolve_engine(snap("vllm-A"), q, cuda(90)).kernel == "CUTLASS block FP8");
    // Static activations with blocks: refused.
    q.activation_static = true;
    const EngineResolution r = resolve_engine(snap("vllm-A"), q, cuda(90));
    BOOST_TEST(r.refused);
    BOOST_TEST(any_contains(r.errors, "weight_block_size"));
}

BOOST_AUTO_TEST_CASE(vllm_accepts_only_8_bit_float_kv_cache_schemes_from_compressed_tensors) {
    EngineQuery q = query("compressed-tensors");
    q.bits = 8;
    q.weight_float = true;
    q.activation = "fp8";
    q.kv_type = "int";
    q.kv_num_bits = 8;
    q.kv_strategy = "tensor";
    EngineResolution r = resolve_engine(snap("vllm-A"), q, cuda(90));
    BOOST_TEST(r.refused);
    BOOST_TEST(any_contains(r.errors, "Currently supported kv cache quantization is num_bits=8, type=float, however received num_bits=8, type=int"),
               joined(r.errors));
    q.kv_type = "float";
    r = resolve_engine(snap("vllm-A"), q, cuda(90));
    BOOST_TEST(!r.refused, joined(r.errors));
    BOOST_TEST(r.scheme == "W8A8-FP8");
    // attn_head: B only.
    q.kv_strategy = "attn_head";
    BOOST_TEST(resolve_engine(snap("vllm-A"), q, cuda(90)).refused);
    BOOST_TEST(!resolve_engine(snap("vllm-B"), q, cuda(90)).refused);
}

BOOST_AUTO_TEST_CASE(kv_cache_formats_the_engines_do_not_offer_are_refused) {
    BOOST_TEST(!kv_cache_refusal(snap("vllm-B"), "fp8").has_value());
    BOOST_TEST(!kv_cache_refusal(snap("vllm-B"), "int8").has_value());  // int8_per_token_head
    BOOST_TEST(kv_cache_refusal(snap("vllm-A"), "int8").has_value());
    BOOST_TEST(kv_cache_refusal(snap("sglang-B"), "int4").has_value());
    BOOST_TEST(!kv_cache_refusal(snap("sglang-A"), "fp16").has_value());
}

BOOST_AUTO_TEST_CASE(an_unregistered_method_is_refused_by_name) {
    const EngineResolution r = resolve_engine(snap("vllm-B"), query("hqq"), cuda(90));
    BOOST_TEST(!r.registered);
    BOOST_TEST(r.refused);
    BOOST_TEST(any_contains(r.errors, "'hqq'"));
    // Deprecated in B: errors without --allow-deprecated-quantization.
    EngineQuery fb = query("fbgemm_fp8");
    fb.bits = 8;
    fb.weight_float = true;
    BOOST_TEST(any_contains(resolve_engine(snap("vllm-B"), fb, cuda(90)).errors, "--allow-deprecated-quantization"));
}

BOOST_AUTO_TEST_CASE(schemes_map_to_the_checkpoints_that_carry_them) {
    BOOST_TEST(!engine_query_for_scheme(parse_scheme("bf16")).has_value());
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w4a16-g128"))->method == "awq");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w4a16-g128-sym"))->method == "compressed-tensors");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w8a16-int8"))->method == "gptq");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w8a8-int8"))->method == "compressed-tensors");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w8a8-fp8"))->method == "fp8");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w8a8-fp8-block128"))->block);
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w4a4-nvfp4"))->quant_algo == "NVFP4");
    BOOST_TEST(engine_query_for_scheme(parse_scheme("w4a16-mxfp4"))->method == "mxfp4");
    BOOST_TEST(compressed_tensors_scheme(*engine_query_for_scheme(parse_scheme("w8a8-int8"))) == "W8A8-INT8");
}

BOOST_AUTO_TEST_CASE(kernel_quality_for_the_planner_follows_the_gpu) {
    const Scheme awq = parse_scheme("w4a16-g128");
    BOOST_TEST(static_cast<int>(engine_kernel_quality(awq, bundled_gpu("h100-sxm"))) == static_cast<int>(KernelQuality::Fused));
    BOOST_TEST(static_cast<int>(engine_kernel_quality(awq, bundled_gpu("mi300x"))) == static_cast<int>(KernelQuality::Fused));  // B: awq_marlin on ROCm
    BOOST_TEST(static_cast<int>(engine_kernel_quality(parse_scheme("w8a8-fp8"), bundled_gpu("a100-80gb"))) == static_cast<int>(KernelQuality::Fused));
}

BOOST_AUTO_TEST_CASE(plan_warnings_name_the_scheme_the_engine_and_the_file) {
    const std::vector<Scheme> schemes{parse_scheme("bf16"), parse_scheme("w4a16-g128"), parse_scheme("w8a8-fp8")};
    // AMD: SGLang does not convert AWQ and warns.
    std::vector<std::string> w = engine_plan_warnings(schemes, bundled_gpu("mi300x"), KernelQuality::Fused, parse_kv_format("bf16"));
    BOOST_TEST(any_contains(w, "w4a16-g128 (declared awq) on mi300x: SGLang sglang-B logs \"awq quantization is not fully optimized yet."), joined(w));
    BOOST_TEST(any_contains(w, "sgl-project/sglang@30cb848d4b45"), joined(w));
    // H100 with a bf16 cache: nothing to say.
    w = engine_plan_warnings(schemes, bundled_gpu("h100-sxm"), KernelQuality::Fused, parse_kv_format("bf16"));
    BOOST_TEST(w.empty(), joined(w));
    // --kernel generic and an int4 cache neither engine offers.
    w = engine_plan_warnings(schemes, bundled_gpu("h100-sxm"), KernelQuality::Generic, parse_kv_format("int4"));
    BOOST_TEST(any_contains(w, "--kernel generic"), joined(w));
    BOOST_TEST(any_contains(w, "--kv int4: vllm-B offers no --kv-cache-dtype"), joined(w));
    BOOST_TEST(any_contains(w, "--kv int4: sglang-B offers no --kv-cache-dtype"), joined(w));
}

BOOST_AUTO_TEST_CASE(a_malformed_registry_file_names_its_field) {
    BOOST_CHECK_THROW(parse_engine_snapshots("{", "x.json"), Error);
    BOOST_CHECK_THROW(parse_engine_snapshots(R"({"engine": "e", "snapshots": []})", "x.json"), Error);
    BOOST_CHECK_EXCEPTION(parse_engine_snapshots(R"({"engine": "e", "snapshots": [{"id": "e-1", "complete": true, "methods": {"names": []}}]})", "x.json"), Error,
                          [](const Error& e) { return std::string(e.what()).find("x.json.snapshots[0].methods") != std::string::npos; });
    BOOST_CHECK_EXCEPTION(parse_engine_snapshots(R"({"engine": "e", "snapshots": [{"id": "e-1", "methods": {"names": ["a"]}, "kernels": [{"method": "a", "class": "fast"}]}]})",
                                                 "x.json"),
                          Error, [](const Error& e) { return std::string(e.what()).find("kernels[0].class") != std::string::npos; });
}

BOOST_AUTO_TEST_SUITE_END()
