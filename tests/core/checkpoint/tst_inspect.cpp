// The checkpoint inspector on checkpoints the tests write: every exporter's layout predicted to the
// byte, mismatches named, hostile files reported one error each, the seeds' published sizes.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "core/checkpoint/inspect_json.h"
#include "core/checkpoint/inspector.h"
#include "core/checkpoint/model_config_json.h"
#include "core/plan/plan.h"
#include "core/scheme/bytes.h"
#include "tests/core/checkpoint/tst_inspect_fixtures.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::test;
using nlohmann::json;
namespace bdata = boost::unit_test::data;

namespace {

InspectReport inspect_dir(const std::filesystem::path& dir, const std::string& gpu = "h100-sxm") {
    InspectOptions o;
    o.gpu = bundled_gpu(gpu);
    return inspect_checkpoint(read_checkpoint(dir), o);
}

// The tiny config with a quantization_config.
json quantized_config(const json& qc, const std::string& dtype = "bfloat16") {
    json c = tiny_config(dtype);
    c["quantization_config"] = qc;
    return c;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += x + " | ";
    return s;
}

std::size_t quantized_count(const InspectReport& r) {
    std::size_t n = 0;
    for (const LogicalTensor& l : r.logical) n += l.quantized ? 1 : 0;
    return n;
}

const LogicalTensor* logical(const InspectReport& r, const std::string& name) {
    for (const LogicalTensor& l : r.logical)
        if (l.name == name) return &l;
    return nullptr;
}

// One exporter layout the inspector must predict to the byte.
struct Format {
    const char* name;
    std::function<FixtureSpec()> spec;
    std::map<std::string, std::string> extra_files;  // e.g. hf_quant_config.json
    const char* q_proj_scheme;                       // scheme name the inspector gives q_proj
    std::size_t quantized;                           // logical tensors predicted quantized
};
std::ostream& operator<<(std::ostream& os, const Format& f) { return os << f.name; }

// Tiny model: 2 layers x 7 linears.
constexpr std::size_t kBlockLinears = 14;

std::vector<SafetensorsEntry> kv_scales(D dtype, const std::vector<std::int64_t>& shape, bool on_projections) {
    std::vector<SafetensorsEntry> t;
    for (int l = 0; l < 2; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".self_attn.";
        t.push_back({p + (on_projections ? "k_proj.k_scale" : "k_scale"), dtype, shape, {}});
        t.push_back({p + (on_projections ? "v_proj.v_scale" : "v_scale"), dtype, shape, {}});
    }
    return t;
}

const Format kFormats[] = {
    {"awq-gemm-g128",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"},
                                      {"modules_to_not_convert", nullptr}}, "float16");
         s.writer = awq_gemm(128);
         s.dtype = D::F16;
         return s;
     },
     {}, "w4a16-g128", kBlockLinears},
    {"awq-gemv-g64",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 64}, {"zero_point", true}, {"version", "GEMV"}}, "float16");
         s.writer = awq_gemv(64);
         s.dtype = D::F16;
         return s;
     },
     {}, "w4a16-g64", kBlockLinears},
    {"awq-gemm-sharded",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "float16");
         s.writer = awq_gemm(128);
         s.dtype = D::F16;
         s.shards = 3;
         return s;
     },
     {}, "w4a16-g128", kBlockLinears},
    {"gptq-4bit-g128",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", false}, {"sym", true},
                                      {"damp_percent", 0.01}, {"true_sequential", true}, {"static_groups", false}}, "float16");
         s.writer = gptq(4, 128);
         s.dtype = D::F16;
         return s;
     },
     {}, "w4a16-g128-sym", kBlockLinears},
    {"gptqmodel-8bit-g128",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "gptq"}, {"bits", 8}, {"group_size", 128}, {"desc_act", false}, {"sym", true},
                                      {"lm_head", false}, {"checkpoint_format", "gptq"}, {"pack_dtype", "int32"}}, "bfloat16");
         s.writer = gptq(8, 128);
         return s;
     },
     {}, "w8a16-int8-g128", kBlockLinears},
    {"compressed-tensors-w4a16-pack",
     [] {
         FixtureSpec s;
         s.config = quantized_config(
             {{"quant_method", "compressed-tensors"}, {"format", "pack-quantized"}, {"ignore", {"lm_head"}}, {"quantization_status", "compressed"},
              {"config_groups", {{"group_0", {{"targets", {"Linear"}},
                                              {"weights", {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 128}, {"dynamic", false}}},
                                              {"input_activations", nullptr}}}}},
              {"kv_cache_scheme", nullptr}});
         s.writer = ct_pack(128);
         return s;
     },
     {}, "w4a16-g128-sym", kBlockLinears},
    {"compressed-tensors-w4a16-actorder",
     [] {
         FixtureSpec s;
         s.config = quantized_config(
             {{"quant_method", "compressed-tensors"}, {"format", "pack-quantized"}, {"ignore", {"lm_head"}},
              {"config_groups", {{"group_0", {{"targets", {"Linear"}},
                                              {"weights", {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 64},
                                                           {"actorder", "group"}}}}}}}});
         s.writer = ct_pack(64, true);
         return s;
     },
     {}, "w4a16-g64-sym", kBlockLinears},
    {"compressed-tensors-w8a8-int8",
     [] {
         FixtureSpec s;
         s.config = quantized_config(
             {{"quant_method", "compressed-tensors"}, {"format", "int-quantized"}, {"ignore", {"lm_head"}},
              {"config_groups", {{"group_0", {{"targets", {"Linear"}},
                                              {"weights", {{"num_bits", 8}, {"type", "int"}, {"symmetric", true}, {"strategy", "channel"}, {"dynamic", false}}},
                                              {"input_activations", {{"num_bits", 8}, {"type", "int"}, {"symmetric", true}, {"strategy", "token"}, {"dynamic", true}}}}}}}});
         s.writer = ct_int8();
         return s;
     },
     {}, "w8a8-int8", kBlockLinears},
    {"compressed-tensors-fp8-static-kv",
     [] {
         FixtureSpec s;
         s.config = quantized_config(
             {{"quant_method", "compressed-tensors"}, {"format", "float-quantized"}, {"ignore", {"lm_head"}},
              {"config_groups", {{"group_0", {{"targets", {"Linear"}},
                                              {"weights", {{"num_bits", 8}, {"type", "float"}, {"symmetric", true}, {"strategy", "channel"}}},
                                              {"input_activations", {{"num_bits", 8}, {"type", "float"}, {"symmetric", true}, {"strategy", "tensor"}, {"dynamic", false}}}}}}},
              {"kv_cache_scheme", {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}, {"dynamic", false}, {"symmetric", true}}}});
         s.writer = ct_fp8(true);
         s.extra = kv_scales(D::BF16, {1}, false);
         return s;
     },
     {}, "w8a8-fp8-static", kBlockLinears},
    {"hf-fp8-block128",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}});
         s.writer = hf_fp8_block(D::BF16);
         return s;
     },
     {}, "w8a8-fp8-block128", kBlockLinears},
    {"modelopt-nvfp4-hf_quant_config",
     [] {
         FixtureSpec s;
         s.writer = modelopt_nvfp4();
         s.extra = kv_scales(D::F32, {}, true);
         return s;
     },
     {{"hf_quant_config.json",
       R"({"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}})"}},
     "w4a4-nvfp4", kBlockLinears},
    {"modelopt-fp8",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"exclude_modules", {"lm_head"}}});
         s.writer = modelopt_fp8();
         return s;
     },
     {}, "w8a8-fp8-tensor-static", kBlockLinears},
    {"bitsandbytes-nf4-double-quant",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "bitsandbytes"}, {"load_in_4bit", true}, {"load_in_8bit", false}, {"bnb_4bit_quant_type", "nf4"},
                                      {"bnb_4bit_use_double_quant", true}, {"bnb_4bit_compute_dtype", "bfloat16"}, {"llm_int8_skip_modules", nullptr}});
         s.writer = bnb_nf4_double_quant();
         return s;
     },
     {}, "w4a16-g64-sym", kBlockLinears},
    {"bitsandbytes-int8",
     [] {
         FixtureSpec s;
         s.config = quantized_config({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}, {"llm_int8_threshold", 6.0}});
         s.writer = bnb_int8();
         return s;
     },
     {}, "w8a16-int8", kBlockLinears},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(inspector)

BOOST_DATA_TEST_CASE(exporter_layouts_are_predicted_to_the_byte, bdata::make(kFormats), f) {
    TempDir dir;
    const FixtureSpec spec = f.spec();
    write_fixture(dir.path(), spec);
    for (const auto& [name, text] : f.extra_files) write_bytes(dir.path() / name, text);
    const InspectReport r = inspect_dir(dir.path());

    BOOST_TEST(r.errors.empty(), "errors: " << joined(r.errors));
    BOOST_TEST(r.compared);
    BOOST_TEST(quantized_count(r) == f.quantized);
    const LogicalTensor* q = logical(r, "model.layers.0.self_attn.q_proj.weight");
    BOOST_TEST_REQUIRE(q != nullptr);
    BOOST_TEST(q->scheme == f.q_proj_scheme);
    for (const LogicalTensor& l : r.logical) {
        BOOST_TEST(l.difference_bytes() == 0, l.name << ": predicted " << l.predicted.total_bytes() << " (payload " << l.predicted.payload_bytes << ", scales "
                                                     << l.predicted.scale_bytes << ", zeros " << l.predicted.zero_point_bytes << ", aux " << l.predicted.aux_bytes
                                                     << "), actual " << l.actual.total_bytes() << " (payload " << l.actual.payload_bytes << ", scales "
                                                     << l.actual.scale_bytes << ", zeros " << l.actual.zero_point_bytes << ", aux " << l.actual.aux_bytes << ")");
        BOOST_TEST(!l.stored.empty(), l.name << " has no stored tensor");
    }
    BOOST_TEST(r.unexpected.empty(), "unexpected: " << joined(r.unexpected));
    BOOST_TEST(r.missing.empty(), "missing: " << joined(r.missing));
    BOOST_TEST(r.mismatches.empty());
    BOOST_TEST(r.actual_bytes == r.predicted_bytes);
    // The files are the tensors plus the headers, exactly.
    BOOST_TEST(r.file_bytes == r.predicted_bytes + r.header_bytes);
    BOOST_TEST(r.warnings.empty(), "warnings: " << joined(r.warnings));
    // Each engine snapshot resolved the method.
    BOOST_TEST(r.engines.size() >= 4u);
}

BOOST_AUTO_TEST_CASE(every_stored_tensor_is_listed_with_its_role_and_component) {
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"desc_act", true}, {"sym", true}}, "float16");
    s.writer = gptq(4, 128);
    s.dtype = D::F16;
    write_fixture(dir.path(), s);
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST(r.tensors.size() == fixture_tensors(s).size());
    bool saw_qzeros = false;
    for (const StoredTensor& t : r.tensors) {
        BOOST_TEST(t.logical.has_value(), t.name);
        if (t.name == "model.layers.1.mlp.down_proj.qzeros") {
            saw_qzeros = true;
            BOOST_TEST(t.role == "mlp");
            BOOST_TEST(tensor_component_name(t.component) == std::string("zero_point"));
            BOOST_TEST(safetensors_dtype_name(t.dtype) == "I32");
            BOOST_TEST((t.shape == std::vector<std::int64_t>{4, 32}));  // [K/G, N*b/32] for down_proj 256 x 512
            BOOST_TEST(t.bytes == 4u * 4u * 32u);
        }
    }
    BOOST_TEST(saw_qzeros);
    // The JSON lists the same tensors with the documented keys.
    const json j = inspect_json(r);
    BOOST_TEST(j["schema_version"] == kInspectSchemaVersion);
    BOOST_TEST(j["tensors"].size() == r.tensors.size());
    for (const char* key : {"name", "file", "dtype", "shape", "bytes", "role", "logical", "component"}) BOOST_TEST(j["tensors"][0].contains(key), key);
    BOOST_TEST(j["totals"]["difference_bytes"] == 0);
    BOOST_TEST(j["quantization"]["facts"]["desc_act"] == true);
    BOOST_TEST(j["engines"]["resolutions"].size() == r.engines.size());
}

BOOST_AUTO_TEST_CASE(a_group_size_other_than_declared_is_named) {
    // The config says group 128; the exporter wrote group-32 scales and zeros.
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "float16");
    s.writer = awq_gemm(32);
    s.dtype = D::F16;
    write_fixture(dir.path(), s);
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST(r.difference_bytes() > static_cast<std::int64_t>(r.header_bytes), "difference " << r.difference_bytes() << ", headers " << r.header_bytes);
    bool total = false, mlp = false;
    for (const Mismatch& m : r.mismatches) {
        total = total || (m.level == "total" && m.actual_bytes == r.actual_bytes && m.predicted_bytes == r.predicted_bytes);
        mlp = mlp || (m.level == "role" && m.name == "mlp");
    }
    BOOST_TEST(total);
    BOOST_TEST(mlp);
    // Every linear differs only in its scales and zeros.
    const LogicalTensor* down = logical(r, "model.layers.0.mlp.down_proj.weight");
    BOOST_TEST_REQUIRE(down != nullptr);
    BOOST_TEST(down->actual.payload_bytes == down->predicted.payload_bytes);
    BOOST_TEST(down->actual.scale_bytes == 4 * down->predicted.scale_bytes);
    BOOST_TEST(down->actual.zero_point_bytes == 4 * down->predicted.zero_point_bytes);
}

BOOST_AUTO_TEST_CASE(a_linear_left_in_bf16_is_named_with_what_differs) {
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "float16");
    s.writer = awq_gemm(128);
    s.dtype = D::F16;
    s.quantize = [](const TensorInfo& t) {
        return (t.role == TensorRole::AttentionLinear || t.role == TensorRole::MlpLinear) && t.name != "model.layers.1.mlp.down_proj.weight";
    };
    write_fixture(dir.path(), s);
    const InspectReport r = inspect_dir(dir.path());
    const Mismatch* m = nullptr;
    for (const Mismatch& x : r.mismatches)
        if (x.level == "tensor" && x.name == "model.layers.1.mlp.down_proj.weight") m = &x;
    BOOST_TEST_REQUIRE(m != nullptr, "mismatches: " << r.mismatches.size());
    BOOST_TEST(m->actual_bytes == 256u * 512u * 2u);
    BOOST_TEST(m->detail.find("payload") != std::string::npos, m->detail);
    BOOST_TEST(m->detail.find("F16 [256, 512]") != std::string::npos, m->detail);
    BOOST_TEST(m->detail.find("w4a16-g128") != std::string::npos, m->detail);
}

BOOST_AUTO_TEST_CASE(an_unknown_method_is_named_and_the_report_is_still_produced) {
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "hqq"}, {"nbits", 4}, {"group_size", 64}});
    write_fixture(dir.path(), s);
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST_REQUIRE(r.warnings.size() == 1u);
    BOOST_TEST(r.warnings[0].find("'hqq'") != std::string::npos, r.warnings[0]);
    BOOST_TEST(quant_method_name(r.quantization.method) == std::string("unknown"));
    BOOST_TEST(r.tensors.size() == fixture_tensors(s).size());
    BOOST_TEST(r.mismatches.empty());  // the file is unquantized, as predicted
    // The engines are still asked: vLLM-A registered hqq, vLLM-B no longer does.
    bool a = false, b = false;
    for (const EngineResolution& e : r.engines) {
        if (e.snapshot->id == "vllm-A") a = e.registered;
        if (e.snapshot->id == "vllm-B") b = !e.registered && e.refused;
    }
    BOOST_TEST(a);
    BOOST_TEST(b);
}

BOOST_AUTO_TEST_CASE(hostile_files_give_one_error_each_and_the_rest_is_inspected) {
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "float16");
    s.writer = awq_gemm(128);
    s.dtype = D::F16;
    write_fixture(dir.path(), s);
    const std::string good = encode_safetensors({{"x", D::F32, {4}, {}}});
    write_bytes(dir.path() / "z-truncated.safetensors", good.substr(0, good.size() - 1));
    std::string huge = good;
    for (int i = 0; i < 8; ++i) huge[static_cast<std::size_t>(i)] = static_cast<char>(0xFF);
    write_bytes(dir.path() / "z-huge-header.safetensors", huge);
    write_bytes(dir.path() / "z-empty.safetensors", "");
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST_REQUIRE(r.errors.size() == 3u, joined(r.errors));
    BOOST_TEST(r.errors[0].find("z-empty.safetensors") != std::string::npos, r.errors[0]);
    BOOST_TEST(r.errors[0].find("HeaderTooSmall") != std::string::npos, r.errors[0]);
    BOOST_TEST(r.errors[1].find("z-huge-header.safetensors") != std::string::npos, r.errors[1]);
    BOOST_TEST(r.errors[1].find("HeaderTooLarge") != std::string::npos, r.errors[1]);
    BOOST_TEST(r.errors[2].find("z-truncated.safetensors") != std::string::npos, r.errors[2]);
    BOOST_TEST(r.errors[2].find("MetadataIncompleteBuffer") != std::string::npos, r.errors[2]);
    // The good file is still compared, and matches.
    BOOST_TEST(r.mismatches.empty());
    BOOST_TEST(r.actual_bytes == r.predicted_bytes);
}

BOOST_AUTO_TEST_CASE(invalid_config_files_are_errors_and_the_tensors_are_still_listed) {
    TempDir dir;
    FixtureSpec s;
    write_fixture(dir.path(), s);
    write_bytes(dir.path() / "config.json", "{\"hidden_size\": 256, ");
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST(r.errors.size() == 2u, joined(r.errors));  // model config and quantization config both unreadable
    BOOST_TEST(r.errors[0].find("config.json") != std::string::npos, r.errors[0]);
    BOOST_TEST(r.tensors.size() == fixture_tensors(s).size());
    BOOST_TEST(!r.model.has_value());
}

BOOST_AUTO_TEST_CASE(a_malformed_quantization_config_names_its_field) {
    TempDir dir;
    FixtureSpec s;
    s.config = quantized_config({{"quant_method", "awq"}, {"bits", 3}, {"group_size", 128}});
    write_fixture(dir.path(), s);
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST_REQUIRE(r.errors.size() == 1u, joined(r.errors));
    BOOST_TEST(r.errors[0].find("quantization_config.bits") != std::string::npos, r.errors[0]);
    BOOST_TEST(quantized_count(r) == 0u);
    BOOST_TEST(r.mismatches.empty());  // the fixture is unquantized, as now predicted
}

BOOST_AUTO_TEST_CASE(the_index_is_checked_against_the_files) {
    TempDir dir;
    FixtureSpec s;
    s.shards = 2;
    write_fixture(dir.path(), s);
    json idx = json::parse(R"({"metadata": {"total_size": 5}, "weight_map": {"model.norm.weight": "model-00009-of-00009.safetensors"}})");
    write_bytes(dir.path() / "model.safetensors.index.json", idx.dump());
    const InspectReport r = inspect_dir(dir.path());
    BOOST_TEST(r.errors.size() == 1u, joined(r.errors));
    BOOST_TEST(r.errors[0].find("model-00009-of-00009.safetensors") != std::string::npos, r.errors[0]);
    BOOST_TEST(r.index_total_size_bytes.value_or(0) == 5u);
    bool total_warned = false;
    for (const std::string& w : r.warnings) total_warned = total_warned || w.find("total_size is 5 bytes") != std::string::npos;
    BOOST_TEST(total_warned, joined(r.warnings));
}

BOOST_AUTO_TEST_CASE(a_lone_config_is_a_prediction_without_files) {
    TempDir dir;
    write_bytes(dir.path() / "config.json", quantized_config({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}}).dump());
    const InspectReport r = inspect_checkpoint(read_checkpoint(dir.path() / "config.json"));
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST(!r.compared);
    BOOST_TEST(r.files.empty());
    BOOST_TEST(r.mismatches.empty());
    BOOST_TEST(quantized_count(r) == kBlockLinears);
    BOOST_TEST(r.predicted_bytes > 0u);
    const json j = inspect_json(r);
    BOOST_TEST(!j["logical_tensors"][0].contains("actual"));
    BOOST_TEST(j["totals"]["compared"] == false);
}

BOOST_AUTO_TEST_CASE(a_config_declaring_millions_of_tensors_is_refused) {
    // 4096 experts x 300 layers passes the planner's bounds but would list 3.7 million tensors.
    TempDir dir;
    json c = tiny_config();
    c["model_type"] = "qwen3_moe";
    c["num_hidden_layers"] = 300;
    c["num_experts"] = 4096;
    c["num_experts_per_tok"] = 8;
    c["moe_intermediate_size"] = 64;
    write_bytes(dir.path() / "config.json", c.dump());
    const InspectReport r = inspect_checkpoint(read_checkpoint(dir.path()));
    BOOST_TEST_REQUIRE(r.errors.size() == 1u, joined(r.errors));
    BOOST_TEST(r.errors[0].find("tensors, more than the 1000000") != std::string::npos, r.errors[0]);
    BOOST_TEST(r.logical.empty());
}

BOOST_AUTO_TEST_CASE(a_missing_path_is_an_error) {
    BOOST_CHECK_THROW(read_checkpoint("/nonexistent/quantplan/checkpoint"), Error);
}

// The seeds' published checkpoints, predicted from config.json alone: the inspector and the
// planner give the same bytes.
struct Published {
    const char* model;
    json quantization_config;
    const char* scheme;
    std::uint64_t bytes;
    const char* source;
};
std::ostream& operator<<(std::ostream& os, const Published& p) { return os << p.model << " " << p.scheme; }

const Published kPublished[] = {
    {"qwen3-8b", {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "w4a16-g128", 6'098'479'104,
     "seed 003: Qwen3-8B-AWQ"},
    {"qwen3-32b", {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}, {"version", "gemm"}}, "w4a16-g128", 19'325'298'688,
     "seed 003: Qwen3-32B-AWQ"},
    {"qwen3-8b", {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}}, "w8a8-fp8-block128",
     9'436'551'168, "seed 003: Qwen3-8B-FP8 (BF16 block scales)"},
};

BOOST_DATA_TEST_CASE(published_checkpoints_match_the_seed_and_the_planner, bdata::make(kPublished), p) {
    TempDir dir;
    json c = json::parse(std::ifstream(models_dir() / p.model / "config.json"));
    c["quantization_config"] = p.quantization_config;
    write_bytes(dir.path() / "config.json", c.dump());
    const InspectReport r = inspect_checkpoint(read_checkpoint(dir.path()));
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST(r.predicted_bytes == p.bytes, p.source << ": expected " << p.bytes << ", predicted " << r.predicted_bytes);
    const CheckpointBudget planner = checkpoint_budget(tensor_inventory(bundled_model(p.model)), parse_scheme(p.scheme));
    BOOST_TEST(r.predicted_bytes == planner.checkpoint_bytes, "planner " << planner.checkpoint_bytes << ", inspector " << r.predicted_bytes);
    // Scheme `native` of the same config.json prices the same bytes, named "native", with the
    // declared scheme's matmul type.
    const ModelConfig declared = load_model_config(dir.path());
    BOOST_TEST_REQUIRE(static_cast<bool>(declared.declared_quantization));
    const SchemeCosts native = scheme_costs(declared, tensor_inventory(declared), parse_scheme("native"), parse_kv_format("bf16"), bundled_gpu("h100-sxm"));
    BOOST_TEST(native.budget.checkpoint_bytes == p.bytes);
    BOOST_TEST(scheme_name(native.scheme) == "native");
    BOOST_TEST((native.scheme.matmul_type() == parse_scheme(p.scheme).matmul_type()));
    BOOST_TEST(native.note.find(p.scheme) != std::string::npos, native.note);
}

// `native` is in the default set exactly when config.json declares a quantization; a model that
// declares none prices its bf16 checkpoint; an undeclarable one is refused naming the method.
BOOST_AUTO_TEST_CASE(native_is_the_checkpoint_as_declared) {
    PlanRequest q;
    q.gpu = bundled_gpu("h200");
    q.model = bundled_model("deepseek-v3");
    q.workload.tensor_parallel = 8;
    const PlanResult deepseek = plan(q);
    const auto native = std::find_if(deepseek.schemes.begin(), deepseek.schemes.end(),
                                     [](const SchemeResult& r) { return scheme_name(r.costs.scheme) == "native"; });
    BOOST_TEST_REQUIRE((native != deepseek.schemes.end()));
    BOOST_TEST(native->costs.budget.checkpoint_bytes == 688'574'839'360ull);  // as deepseek_v3_fp8_checkpoint_is_predicted_as_it_ships
    BOOST_TEST(native->costs.resident_weight_bytes == native->costs.budget.checkpoint_bytes - native->costs.budget.speculative_bytes);
    // Its accuracy evidence is that of what it stores (FP8 W8A8), not of a weight-only scheme.
    const auto ranked = std::find_if(deepseek.decision.ranking.begin(), deepseek.decision.ranking.end(),
                                     [](const RankedScheme& r) { return r.scheme == "native"; });
    BOOST_TEST_REQUIRE((ranked != deepseek.decision.ranking.end()));
    BOOST_TEST(std::any_of(ranked->reasons.begin(), ranked->reasons.end(), [](const std::string& r) { return r.find("FP8 W8A8") != std::string::npos; }));
    q.model = bundled_model("qwen3-8b");
    q.workload.tensor_parallel = 1;
    const PlanResult qwen = plan(q);
    BOOST_TEST(std::none_of(qwen.schemes.begin(), qwen.schemes.end(), [](const SchemeResult& r) { return r.costs.scheme.native; }));
    q.schemes = {parse_scheme("native")};
    BOOST_TEST(plan(q).schemes[0].costs.budget.checkpoint_bytes == 16'381'470'720ull);  // its bf16 checkpoint
    // A ModelOpt export declares its quantization beside config.json (hf_quant_config.json).
    TempDir modelopt;
    write_bytes(modelopt.path() / "config.json", json::parse(std::ifstream(models_dir() / "qwen3-8b" / "config.json")).dump());
    write_bytes(modelopt.path() / "hf_quant_config.json",
                R"({"producer": {"name": "modelopt", "version": "0.17.0"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}})");
    q.model = load_model_config(modelopt.path());
    q.schemes = {parse_scheme("native")};
    const SchemeResult nvfp4 = plan(q).schemes[0];
    BOOST_TEST(nvfp4.costs.note.find("hf_quant_config.json") != std::string::npos, nvfp4.costs.note);
    BOOST_TEST(nvfp4.costs.budget.checkpoint_bytes == inspect_checkpoint(read_checkpoint(modelopt.path())).predicted_bytes);
    TempDir dir;
    json c = json::parse(std::ifstream(models_dir() / "qwen3-8b" / "config.json"));
    c["quantization_config"] = {{"quant_method", "hqq"}, {"nbits", 4}};
    write_bytes(dir.path() / "config.json", c.dump());
    q.model = load_model_config(dir.path());
    BOOST_TEST(test::throws_naming([&] { plan(q); }, "hqq"));
}

BOOST_AUTO_TEST_CASE(every_bundled_model_config_is_read) {
    for (const BundledModel& m : load_model_catalog(models_dir())) {
        if (!m.priced) continue;  // every_unpriced_bundled_config_is_refused_in_one_line (tst_model.cpp)
        const InspectReport r = inspect_checkpoint(read_checkpoint(models_dir() / m.name / "config.json"));
        BOOST_TEST(r.errors.empty(), m.name << ": " << joined(r.errors));
        if (r.quantization.method != QuantMethod::None) continue;  // DeepSeek-V3 and Kimi-K2 declare their FP8 (below)
        BOOST_TEST(r.predicted_bytes == checkpoint_budget(tensor_inventory(bundled_model(m.name)), parse_scheme("bf16")).checkpoint_bytes, m.name);
    }
}

// DeepSeek-V3's config.json declares fp8 with 128x128 weight blocks. Its checkpoint keeps the
// routers (built with quant_config=None in vLLM deepseek_v2.py), the embedding, the head, norms
// and the MTP module's eh_proj in bf16, the router score bias in fp32, and F32 weight_scale_inv
// (reference checkpoint-formats.md §4): 688,574,839,360 bytes of tensors, the 641.29 GiB that a
// published listing of DeepSeek-R1's 163 safetensors files (same architecture) gives as its
// tensors' total, found through the code search (its repository is not named by the index).
BOOST_AUTO_TEST_CASE(deepseek_v3_fp8_checkpoint_is_predicted_as_it_ships) {
    const InspectReport r = inspect_checkpoint(read_checkpoint(models_dir() / "deepseek-v3" / "config.json"));
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST((r.quantization.method == QuantMethod::Fp8));
    BOOST_TEST(r.predicted_bytes == 688'574'839'360ull);
    BOOST_TEST(std::abs(static_cast<double>(r.predicted_bytes) / (1024.0 * 1024.0 * 1024.0) - 641.29) < 0.005);
    for (const LogicalTensor& t : r.logical) {
        if (t.name.ends_with("mlp.gate.weight")) BOOST_TEST(!t.quantized, t.name);
        if (t.name.ends_with("e_score_correction_bias")) BOOST_TEST(t.predicted.payload_bytes == 256u * 4u, t.name);
    }
}

// Inspects a checkpoint of `config` holding `tensors` (written to a temporary folder).
InspectReport inspect_written(const json& config, const std::vector<SafetensorsEntry>& tensors) {
    TempDir dir;
    write_bytes(dir.path() / "config.json", config.dump(2));
    write_bytes(dir.path() / "model.safetensors", encode_safetensors(tensors, {{"format", "pt"}}));
    return inspect_checkpoint(read_checkpoint(dir.path()));
}

// Every stored tensor accounted for and every predicted one stored, bytes equal.
void expect_matched(const InspectReport& r) {
    BOOST_TEST(r.errors.empty(), joined(r.errors));
    BOOST_TEST(r.unexpected.empty(), joined(r.unexpected));
    BOOST_TEST(r.missing.empty(), joined(r.missing));
    BOOST_TEST(r.predicted_bytes == r.actual_bytes);
    BOOST_TEST(r.mismatches.empty());
}

// gpt-oss's checkpoint layout (reference checkpoint-formats.md §7): each projection of a layer's
// experts is one MXFP4 tensor (gate_up_proj_blocks U8 [E, 2I, H/32, 16], _scales U8 [E, 2I, H/32],
// _bias BF16 [E, 2I]; down_proj the same), attention, router and sinks in bf16. The inspector
// shares the fused tensors over the per-expert prediction: nothing unexpected, nothing missing,
// predicted = actual.
BOOST_AUTO_TEST_CASE(gpt_oss_fused_mxfp4_experts_are_matched) {
    json c = {{"model_type", "gpt_oss"}, {"hidden_size", 64}, {"intermediate_size", 64}, {"num_hidden_layers", 2},
              {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16}, {"vocab_size", 128},
              {"num_local_experts", 4}, {"num_experts_per_tok", 2}, {"sliding_window", 8},
              {"layer_types", {"sliding_attention", "full_attention"}}, {"torch_dtype", "bfloat16"},
              {"quantization_config", {{"quant_method", "mxfp4"},
                                       {"modules_to_not_convert", {"model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"}}}}};
    const ModelConfig m = parse_model_config(c.dump(), "gpt-oss fixture");
    std::vector<SafetensorsEntry> tensors;
    for (const TensorInfo& t : tensor_inventory(m))
        if (t.name.find(".mlp.experts.") == std::string::npos) tensors.push_back({t.name, D::BF16, t.shape, {}});
    const std::int64_t e = 4, h = 64, i = 64;
    for (int l = 0; l < 2; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts.";
        tensors.push_back({p + "gate_up_proj_blocks", D::U8, {e, 2 * i, h / 32, 16}, {}});
        tensors.push_back({p + "gate_up_proj_scales", D::U8, {e, 2 * i, h / 32}, {}});
        tensors.push_back({p + "gate_up_proj_bias", D::BF16, {e, 2 * i}, {}});
        tensors.push_back({p + "down_proj_blocks", D::U8, {e, h, i / 32, 16}, {}});
        tensors.push_back({p + "down_proj_scales", D::U8, {e, h, i / 32}, {}});
        tensors.push_back({p + "down_proj_bias", D::BF16, {e, h}, {}});
    }
    const InspectReport r = inspect_written(c, tensors);
    expect_matched(r);
    // `native` prices the same bytes.
    const SchemeCosts native = scheme_costs(m, tensor_inventory(m), parse_scheme("native"), parse_kv_format("bf16"), bundled_gpu("h100-sxm"));
    BOOST_TEST(native.budget.checkpoint_bytes == r.predicted_bytes);
}

// Llama 4's bf16 layout (transformers 4.51 modeling_llama4.py Llama4TextExperts): each layer's
// routed experts in two fused tensors, gate_up_proj [E, hidden, 2I] and down_proj [E, I, hidden],
// under language_model.model.; the inspector shares them over the per-expert prediction. And a
// small Nemotron-H config with its Infinity literal and Mamba2 tensors (conv1d [conv_dim, 1, 4]).
BOOST_AUTO_TEST_CASE(llama4_fused_experts_and_nemotron_h_mamba_tensors_are_matched) {
    json c = {{"model_type", "llama4"}, {"torch_dtype", "bfloat16"},
              {"text_config", {{"model_type", "llama4_text"}, {"hidden_size", 64}, {"intermediate_size", 32}, {"intermediate_size_mlp", 96},
                               {"num_hidden_layers", 4}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16},
                               {"vocab_size", 128}, {"num_local_experts", 4}, {"interleave_moe_layer_step", 2}, {"attention_chunk_size", 8}}}};
    const ModelConfig m = parse_model_config(c.dump(), "llama4 fixture");
    std::vector<SafetensorsEntry> tensors;
    for (const TensorInfo& t : tensor_inventory(m))
        if (t.name.find(".feed_forward.experts.") == std::string::npos) tensors.push_back({t.name, D::BF16, t.shape, {}});
    for (int l : {1, 3}) {
        const std::string p = "language_model.model.layers." + std::to_string(l) + ".feed_forward.experts.";
        tensors.push_back({p + "gate_up_proj", D::BF16, {4, 64, 64}, {}});
        tensors.push_back({p + "down_proj", D::BF16, {4, 32, 64}, {}});
    }
    BOOST_TEST(std::any_of(tensors.begin(), tensors.end(), [](const SafetensorsEntry& e) { return e.name == "language_model.model.layers.0.feed_forward.gate_proj.weight"; }));
    expect_matched(inspect_written(c, tensors));

    const std::string nemotron = R"({"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,
        "num_key_value_heads":2,"vocab_size":100,"intermediate_size":128,"mamba_num_heads":4,"mamba_head_dim":16,"ssm_state_size":8,
        "n_groups":2,"conv_kernel":4,"hybrid_override_pattern":"M*-","time_step_limit":[0.0, Infinity],"torch_dtype":"bfloat16"})";
    std::vector<SafetensorsEntry> mamba;
    for (const TensorInfo& t : tensor_inventory(parse_model_config(nemotron, "nemotron fixture"))) mamba.push_back({t.name, D::BF16, t.shape, {}});
    BOOST_TEST(std::any_of(mamba.begin(), mamba.end(), [](const SafetensorsEntry& e) { return e.name == "backbone.layers.0.mixer.conv1d.weight" && e.shape.size() == 3; }));
    TempDir dir;
    write_bytes(dir.path() / "config.json", nemotron);  // as written: the Infinity literal stays
    write_bytes(dir.path() / "model.safetensors", encode_safetensors(mamba, {{"format", "pt"}}));
    expect_matched(inspect_checkpoint(read_checkpoint(dir.path())));
}

// DeepSeek-V3's FP8 layout on a small config of its architecture: every linear of the blocks
// (MLA projections, dense MLP, routed and shared experts, the MTP module's layer) F8_E4M3 with F32
// weight_scale_inv, the routers, eh_proj, embeddings and heads in bf16, the score bias F32. The
// inspector matches every stored tensor and predicts the bytes exactly.
BOOST_AUTO_TEST_CASE(deepseek_v3_fp8_headers_are_matched) {
    json c = {{"model_type", "deepseek_v3"}, {"hidden_size", 256}, {"intermediate_size", 512}, {"num_hidden_layers", 3},
              {"num_attention_heads", 4}, {"num_key_value_heads", 4}, {"vocab_size", 512}, {"q_lora_rank", 128},
              {"kv_lora_rank", 64}, {"qk_nope_head_dim", 32}, {"qk_rope_head_dim", 16}, {"v_head_dim", 32},
              {"n_routed_experts", 8}, {"n_shared_experts", 1}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 128},
              {"first_k_dense_replace", 1}, {"moe_layer_freq", 1}, {"topk_method", "noaux_tc"}, {"num_nextn_predict_layers", 1},
              {"torch_dtype", "bfloat16"},
              {"quantization_config", {{"quant_method", "fp8"}, {"activation_scheme", "dynamic"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}}}};
    const ModelConfig m = parse_model_config(c.dump(), "deepseek fixture");
    const LinearWriter fp8 = hf_fp8_block(D::F32);
    std::vector<SafetensorsEntry> tensors;
    for (const TensorInfo& t : tensor_inventory(m)) {
        const bool block_linear = t.role == TensorRole::AttentionLinear || t.role == TensorRole::MlpLinear ||
                                  t.role == TensorRole::ExpertLinear || t.role == TensorRole::SharedExpertLinear;
        if (block_linear) {
            for (SafetensorsEntry& e : fp8(t.name.substr(0, t.name.size() - 7), t.shape[0], t.shape[1])) tensors.push_back(std::move(e));
        } else {
            tensors.push_back({t.name, t.fixed_dtype ? D::F32 : D::BF16, t.shape, {}});
        }
    }
    const InspectReport r = inspect_written(c, tensors);
    expect_matched(r);
    BOOST_TEST(std::any_of(tensors.begin(), tensors.end(), [](const SafetensorsEntry& e) { return e.name == "model.layers.3.eh_proj.weight"; }));
}

BOOST_AUTO_TEST_SUITE_END()
