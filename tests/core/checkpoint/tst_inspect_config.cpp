// quantization_config variants turned into core Schemes per module: published configs (reference
// checkpoint-formats.md C1-C12), targets as names / regexes / class names, ignore lists, GPTQModel
// dynamic overrides, ModelOpt globs, and the errors a malformed config gives.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/checkpoint/quant_config.h"
#include "core/scheme/bytes.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::test;
using nlohmann::json;
namespace bdata = boost::unit_test::data;

namespace {

// A config.json text around a quantization_config text (kept as written: key order matters for
// GPTQModel's dynamic rules and compressed-tensors' groups).
QuantizationConfig from_text(const std::string& qc, const std::string& dtype = "bfloat16") {
    QuantConfigTexts t;
    t.config_json = "{\"torch_dtype\": \"" + dtype + "\", \"quantization_config\": " + qc + "}";
    return parse_quantization_config(t);
}

QuantizationConfig from_config(const json& qc, const std::string& dtype = "bfloat16") { return from_text(qc.dump(), dtype); }

// The scheme name module_rule gives `module` (of role `role`), or "-" when it stays unquantized.
std::string scheme_of(const QuantizationConfig& c, const std::string& module, TensorRole role) {
    const QuantRule* r = module_rule(c, module, role);
    return r ? scheme_name(r->scheme) : "-";
}

// Published configs, quoted from ../shared/reference/checkpoint-formats.md.
struct PublishedConfig {
    const char* name;
    const char* quantization_config;
    const char* method;
    const char* scheme;  // of model.layers.0.self_attn.q_proj
    int bits;
};
std::ostream& operator<<(std::ostream& os, const PublishedConfig& p) { return os << p.name; }

const PublishedConfig kPublished[] = {
    {"C1 TheBloke/Mistral-7B-Instruct-v0.1-AWQ", R"({"quant_method": "awq", "zero_point": true, "group_size": 128, "bits": 4, "version": "gemm"})", "awq",
     "w4a16-g128", 4},
    {"C3 AutoGPTQ Mistral-7B 4-bit",
     R"({"bits": 4, "damp_percent": 0.01, "desc_act": true, "group_size": 128, "is_marlin_format": false, "quant_method": "gptq", "static_groups": false, "sym": true, "true_sequential": true})",
     "gptq", "w4a16-g128-sym", 4},
    {"C4 GPTQModel Seed-OSS-36B Int8",
     R"({"bits": 8, "group_size": 128, "desc_act": false, "sym": true, "lm_head": false, "quant_method": "gptq", "checkpoint_format": "gptq", "pack_dtype": "int32", "meta": {"quantizer": ["gptqmodel:2.2.0"]}})",
     "gptq", "w8a16-int8-g128", 8},
    {"C5 nm-testing DeepSeek-Coder-V2-Lite W8A8",
     R"({"config_groups": {"group_0": {"input_activations": {"dynamic": true, "num_bits": 8, "strategy": "token", "symmetric": true, "type": "int"}, "targets": ["Linear"], "weights": {"dynamic": false, "group_size": null, "num_bits": 8, "strategy": "channel", "symmetric": true, "type": "int"}}}, "format": "int-quantized", "ignore": ["lm_head"], "kv_cache_scheme": null, "quant_method": "compressed-tensors", "quantization_status": "compressed"})",
     "compressed-tensors", "w8a8-int8", 8},
    {"R10 DeepSeek-V3 fp8", R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]})", "fp8",
     "w8a8-fp8-block128", 8},
    {"C10 bitsandbytes nf4",
     R"({"bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true, "llm_int8_skip_modules": null, "llm_int8_threshold": 6.0, "load_in_4bit": true, "load_in_8bit": false, "quant_method": "bitsandbytes"})",
     "bitsandbytes", "w4a16-g64-sym", 4},
    {"modelopt in config.json", R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]})", "modelopt",
     "w4a4-nvfp4", 4},
    {"C11 gpt-oss mxfp4",
     R"({"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"})",
     "mxfp4", "-", 4},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(quantization_config)

BOOST_DATA_TEST_CASE(published_configs_parse_into_schemes, bdata::make(kPublished), p) {
    const QuantizationConfig c = from_config(json::parse(p.quantization_config));
    BOOST_TEST(std::string(quant_method_name(c.method)) == p.method);
    BOOST_TEST(c.problem.empty());
    BOOST_TEST(c.facts.bits == p.bits);
    BOOST_TEST(scheme_of(c, "model.layers.0.self_attn.q_proj", TensorRole::AttentionLinear) == p.scheme);
    // Nobody quantizes the embedding table; only GPTQModel with lm_head: true and compressed-tensors
    // without an ignore entry quantize lm_head.
    BOOST_TEST(scheme_of(c, "model.embed_tokens", TensorRole::Embedding) == "-");
    BOOST_TEST(scheme_of(c, "lm_head", TensorRole::LmHead) == "-");
    BOOST_TEST(scheme_of(c, "model.norm", TensorRole::Norm) == "-");
}

BOOST_AUTO_TEST_CASE(older_files_declare_the_method_outside_config_json) {
    QuantConfigTexts awq;
    awq.config_json = R"({"torch_dtype": "float16"})";
    awq.quant_config = R"({"zero_point": true, "q_group_size": 64, "w_bit": 4, "version": "GEMM"})";
    QuantizationConfig c = parse_quantization_config(awq);
    BOOST_TEST(quant_method_name(c.method) == std::string("awq"));
    BOOST_TEST(c.source == "quant_config.json");
    BOOST_TEST(c.facts.group_size == 64);
    BOOST_TEST(dtype_name(c.model_dtype) == "fp16");

    QuantConfigTexts gptq;
    gptq.quantize_config = R"({"bits": 4, "group_size": 128, "desc_act": false, "sym": true})";
    BOOST_TEST(quant_method_name(parse_quantization_config(gptq).method) == std::string("gptq"));

    QuantConfigTexts modelopt;
    modelopt.hf_quant_config = R"({"producer": {"name": "modelopt", "version": "0.17.0"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": null}})";
    c = parse_quantization_config(modelopt);
    BOOST_TEST(quant_method_name(c.method) == std::string("modelopt"));
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.up_proj", TensorRole::MlpLinear) == "w8a8-fp8-tensor-static");
    // Default exclusions without exclude_modules: lm_head and routers.
    BOOST_TEST(scheme_of(c, "lm_head", TensorRole::LmHead) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.gate", TensorRole::Router) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.0.block_sparse_moe.gate", TensorRole::Router) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.gate_proj", TensorRole::MlpLinear) == "w8a8-fp8-tensor-static");

    // compressed-tensors <= 0.5 wrote compression_config, with the quantization nested.
    QuantConfigTexts old;
    old.config_json = R"({"compression_config": {"quantization_config": {"config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}, "format": "float-quantized", "quant_method": "sparseml"}}})";
    c = parse_quantization_config(old);
    BOOST_TEST(quant_method_name(c.method) == std::string("compressed-tensors"));
    BOOST_TEST(c.source == "config.json: compression_config.quantization_config");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.up_proj", TensorRole::MlpLinear) == "w8a16-fp8-tensor");
}

BOOST_AUTO_TEST_CASE(compressed_tensors_targets_are_names_regexes_or_class_names) {
    const std::string qc = R"({
      "quant_method": "compressed-tensors", "format": "mixed-precision",
      "config_groups": {
        "attention": {"targets": ["re:.*self_attn\\.(q|k|v|o)_proj$"], "format": "pack-quantized",
                      "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": true}},
        "layer0_down": {"targets": ["model.layers.0.mlp.down_proj"], "format": "pack-quantized",
                        "weights": {"num_bits": 8, "type": "int", "strategy": "group", "group_size": 64, "symmetric": true}},
        "rest": {"targets": ["Linear"], "format": "float-quantized",
                 "weights": {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128], "symmetric": true},
                 "input_activations": {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 128, "dynamic": true}}
      },
      "ignore": ["lm_head", "re:.*mlp\\.gate$", "re:model\\.layers\\.1\\.mlp\\.up_proj"]
    })";
    const QuantizationConfig c = from_text(qc);
    BOOST_TEST(scheme_of(c, "model.layers.0.self_attn.k_proj", TensorRole::AttentionLinear) == "w4a16-g128-sym");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.down_proj", TensorRole::MlpLinear) == "w8a16-int8-g64");
    BOOST_TEST(scheme_of(c, "model.layers.1.mlp.down_proj", TensorRole::MlpLinear) == "w8a8-fp8-block128");
    BOOST_TEST(scheme_of(c, "model.layers.1.mlp.up_proj", TensorRole::MlpLinear) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.gate", TensorRole::Router) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.experts.3.up_proj", TensorRole::ExpertLinear) == "w8a8-fp8-block128");
    BOOST_TEST(scheme_of(c, "lm_head", TensorRole::LmHead) == "-");
    BOOST_TEST(scheme_of(c, "model.embed_tokens", TensorRole::Embedding) == "-");
    // Layouts follow each group's format.
    BOOST_TEST(static_cast<int>(module_rule(c, "model.layers.0.self_attn.k_proj", TensorRole::AttentionLinear)->scheme.layout) ==
               static_cast<int>(CheckpointLayout::CompressedTensorsPacked));
    // The scales follow the layer dtype (bf16): 4096 x 4096 W4A16 g128 has 4096 x 32 bf16 scales.
    const Scheme& s = module_rule(c, "model.layers.0.self_attn.q_proj", TensorRole::AttentionLinear)->scheme;
    BOOST_TEST(quantized_tensor_bytes(s, 4096, 4096).scale_bytes == 4096u * 32u * 2u);
}

BOOST_AUTO_TEST_CASE(compressed_tensors_quantizes_lm_head_and_routers_unless_ignored) {
    const QuantizationConfig c = from_config(json::parse(
        R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}})"));
    BOOST_TEST(scheme_of(c, "lm_head", TensorRole::LmHead) == "w8a16-fp8");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.gate", TensorRole::Router) == "w8a16-fp8");
    BOOST_TEST(scheme_of(c, "model.embed_tokens", TensorRole::Embedding) == "-");
    const QuantizationConfig e = from_config(json::parse(
        R"({"quant_method": "compressed-tensors", "format": "naive-quantized", "config_groups": {"g": {"targets": ["Embedding"], "weights": {"num_bits": 4, "type": "int", "strategy": "channel", "symmetric": false}}}})"));
    const QuantRule* r = module_rule(e, "model.embed_tokens", TensorRole::Embedding);
    BOOST_TEST_REQUIRE(r != nullptr);
    // naive-quantized keeps one value per byte.
    BOOST_TEST(quantized_tensor_bytes(r->scheme, 1000, 64).payload_bytes == 64000u);
}

BOOST_AUTO_TEST_CASE(compressed_tensors_nvfp4_and_kv_cache_schemes) {
    const QuantizationConfig c = from_config(json::parse(R"({
      "quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": true, "dynamic": false},
        "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": true, "dynamic": "local"}}},
      "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": false, "symmetric": true}})"));
    const QuantRule* r = module_rule(c, "model.layers.0.mlp.up_proj", TensorRole::MlpLinear);
    BOOST_TEST_REQUIRE(r != nullptr);
    BOOST_TEST(scheme_name(r->scheme) == "w4a4-nvfp4");
    // weight_packed N*K/2 + weight_scale N*K/16 + weight_global_scale 4 + input_global_scale 4 (reference §9).
    BOOST_TEST(quantized_tensor_bytes(r->scheme, 4096, 4096).total_bytes() == 4096u * 4096u / 2 + 4096u * 4096u / 16 + 8);
    BOOST_TEST_REQUIRE(c.kv_cache.has_value());
    BOOST_TEST(c.kv_cache->format.has_value());
    BOOST_TEST(c.facts.activation == "fp4");
}

BOOST_AUTO_TEST_CASE(gptqmodel_dynamic_overrides_and_exclusions_match_first_to_last) {
    const QuantizationConfig c = from_text(R"({
      "quant_method": "gptq", "bits": 4, "group_size": 128, "sym": true, "desc_act": false,
      "dynamic": {"-:.*\\.mlp\\.down_proj": {}, "+:model\\.layers\\.1\\..*": {"bits": 8, "group_size": 32}}})");
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.down_proj", TensorRole::MlpLinear) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.1.mlp.down_proj", TensorRole::MlpLinear) == "-");  // the exclusion comes first
    BOOST_TEST(scheme_of(c, "model.layers.1.self_attn.q_proj", TensorRole::AttentionLinear) == "w8a16-int8-g32");
    BOOST_TEST(scheme_of(c, "model.layers.0.self_attn.q_proj", TensorRole::AttentionLinear) == "w4a16-g128-sym");
    // Routers are never GPTQ-quantized; lm_head only with lm_head: true.
    BOOST_TEST(scheme_of(c, "model.layers.0.mlp.gate", TensorRole::Router) == "-");
    const QuantizationConfig h = from_config(json::parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": true})"));
    BOOST_TEST(scheme_of(h, "lm_head", TensorRole::LmHead) == "w4a16-g128-sym");
}

BOOST_AUTO_TEST_CASE(awq_and_bitsandbytes_skip_lists_match_as_their_exporters_do) {
    // AutoAWQ: substring. Mixtral's default ["gate"] skips the router only (experts are w1/w2/w3)...
    const QuantizationConfig awq = from_config(json::parse(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["gate"]})"));
    BOOST_TEST(scheme_of(awq, "model.layers.0.block_sparse_moe.gate", TensorRole::Router) == "-");
    BOOST_TEST(scheme_of(awq, "model.layers.0.block_sparse_moe.experts.0.w1", TensorRole::ExpertLinear) == "w4a16-g128");
    // ... and would skip every gate_proj of a Qwen model, as AutoAWQ's substring test does.
    BOOST_TEST(scheme_of(awq, "model.layers.0.mlp.gate_proj", TensorRole::MlpLinear) == "-");
    // Without a skip list AWQ converts routers too (every nn.Linear of the block).
    const QuantizationConfig awq2 = from_config(json::parse(R"({"quant_method": "awq", "bits": 4, "group_size": 128})"));
    BOOST_TEST(scheme_of(awq2, "model.layers.0.mlp.gate", TensorRole::Router) == "w4a16-g128");
    // transformers' bitsandbytes: a skip key matches the module or a path component.
    const QuantizationConfig bnb = from_config(json::parse(R"({"quant_method": "bitsandbytes", "load_in_8bit": true, "llm_int8_skip_modules": ["mlp", "lm_head"]})"));
    BOOST_TEST(scheme_of(bnb, "model.layers.0.mlp.up_proj", TensorRole::MlpLinear) == "-");
    BOOST_TEST(scheme_of(bnb, "model.layers.0.self_attn.q_proj", TensorRole::AttentionLinear) == "w8a16-int8");
}

BOOST_AUTO_TEST_CASE(mxfp4_quantizes_only_the_experts) {
    const QuantizationConfig c = from_config(json::parse(kPublished[7].quantization_config));
    BOOST_TEST(scheme_of(c, "model.layers.3.mlp.experts.0.up_proj", TensorRole::ExpertLinear) == "w4a16-mxfp4");
    BOOST_TEST(scheme_of(c, "model.layers.3.self_attn.q_proj", TensorRole::AttentionLinear) == "-");
    BOOST_TEST(scheme_of(c, "model.layers.3.mlp.router", TensorRole::Router) == "-");
    // One expert matrix: N*K/2 + N*K/32 (reference §9).
    const QuantRule* r = module_rule(c, "model.layers.3.mlp.experts.0.up_proj", TensorRole::ExpertLinear);
    BOOST_TEST(quantized_tensor_bytes(r->scheme, 2880, 2880).total_bytes() == 2880u * 2880u / 2 + 2880u * 2880u / 32);
}

BOOST_AUTO_TEST_CASE(an_unknown_method_is_named_and_quantizes_nothing) {
    const QuantizationConfig c = from_config(json::parse(R"({"quant_method": "quark", "global_quant_config": {}})"));
    BOOST_TEST(quant_method_name(c.method) == std::string("unknown"));
    BOOST_TEST(c.declared_method == "quark");
    BOOST_TEST(c.problem.find("'quark'") != std::string::npos, c.problem);
    BOOST_TEST(scheme_of(c, "model.layers.0.self_attn.q_proj", TensorRole::AttentionLinear) == "-");
}

struct BadConfig {
    const char* name;
    const char* quantization_config;
    const char* field;  // the error names it
};
std::ostream& operator<<(std::ostream& os, const BadConfig& b) { return os << b.name; }

const BadConfig kBad[] = {
    {"awq 3-bit", R"({"quant_method": "awq", "bits": 3})", "quantization_config.bits"},
    {"awq gemv group 16", R"({"quant_method": "awq", "bits": 4, "group_size": 16, "version": "gemv"})", "quantization_config.group_size"},
    {"gptq 5-bit", R"({"quant_method": "gptq", "bits": 5})", "quantization_config.bits"},
    {"gptq group 0", R"({"quant_method": "gptq", "bits": 4, "group_size": 0})", "quantization_config.group_size"},
    {"gptq group as text", R"({"quant_method": "gptq", "bits": 4, "group_size": "128"})", "quantization_config.group_size"},
    {"gptq bad dynamic regex", R"j({"quant_method": "gptq", "bits": 4, "dynamic": {"-:(?!x)": {}}})j", "quantization_config.dynamic"},
    {"compressed-tensors strategy", R"({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "diagonal"}}}})",
     "config_groups.g.weights.strategy"},
    {"compressed-tensors group without size", R"({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group"}}}})",
     "config_groups.g.weights.group_size"},
    {"compressed-tensors pack of floats", R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "float"}}}})",
     "config_groups.g.format"},
    {"compressed-tensors regex", R"j({"quant_method": "compressed-tensors", "ignore": ["re:(?<=x)"], "config_groups": {}})j", "quantization_config.ignore"},
    {"fp8 block with static activations", R"({"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]})",
     "quantization_config.activation_scheme"},
    {"fp8 block shape", R"({"quant_method": "fp8", "weight_block_size": [128]})", "quantization_config.weight_block_size"},
    {"modelopt algorithm", R"({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})", "quantization_config.quant_algo"},
    {"bitsandbytes neither", R"({"quant_method": "bitsandbytes"})", "quantization_config.load_in_4bit"},
    {"no quant_method", R"({"bits": 4})", "quantization_config.quant_method"},
    {"not an object", R"([1, 2])", "quantization_config"},
};

BOOST_DATA_TEST_CASE(malformed_configs_name_the_field, bdata::make(kBad), b) {
    BOOST_CHECK_EXCEPTION(from_config(json::parse(b.quantization_config)), Error, [&](const Error& e) {
        BOOST_TEST_MESSAGE("  " << e.what());
        return std::string(e.what()).find(b.field) != std::string::npos;
    });
}

BOOST_AUTO_TEST_CASE(hostile_config_text_is_refused_not_crashed_on) {
    QuantConfigTexts t;
    t.config_json = std::string(10000, '[') + std::string(10000, ']');
    BOOST_CHECK_THROW(parse_quantization_config(t), Error);
    t.config_json = "{\"quantization_config\": ";
    BOOST_CHECK_THROW(parse_quantization_config(t), Error);
    t.config_json = "{}";
    BOOST_TEST(quant_method_name(parse_quantization_config(t).method) == std::string("none"));
    BOOST_TEST(dtype_name(declared_model_dtype("not json")) == "bf16");
    BOOST_TEST(dtype_name(declared_model_dtype(R"({"text_config": {"torch_dtype": "float16"}})")) == "fp16");
}

BOOST_AUTO_TEST_SUITE_END()
