#pragma once
// What a checkpoint's quantization config declares, turned into core Schemes per module.
//
// Reads config.json's quantization_config (or the older compression_config), ModelOpt's
// hf_quant_config.json, AutoAWQ's quant_config.json and AutoGPTQ's quantize_config.json. Each method
// becomes an ordered list of rules (targets -> Scheme, or skip) plus the roles the exporter can
// quantize at all; module_rule() answers "how is this module stored?" the way the exporter and the
// engines decide it. The packings and naming rules are those of
// ../shared/reference/checkpoint-formats.md §1-§8 (docs/inspector.md lists what is modelled).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/checkpoint/name_pattern.h"
#include "core/model/model.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// The quantization methods quantplan reads.
enum class QuantMethod : std::uint8_t {
    None,               // no quantization config: everything in the model dtype
    Awq,                // AutoAWQ ("awq")
    Gptq,               // AutoGPTQ / GPTQModel ("gptq")
    CompressedTensors,  // llm-compressor ("compressed-tensors", older "sparseml")
    Fp8,                // Hugging Face / AutoFP8 "fp8" (per-tensor or weight_block_size)
    ModelOpt,           // NVIDIA ModelOpt ("modelopt", "modelopt_fp4", hf_quant_config.json)
    Bitsandbytes,       // "bitsandbytes" 4-bit (nf4/fp4, double quant) or LLM.int8
    Mxfp4,              // "mxfp4" (openai/gpt-oss experts)
    Unknown,            // a method quantplan does not model: named in `problem`
};

// Lower-case name of a method ("awq", "compressed-tensors", ...).
const char* quant_method_name(QuantMethod method);

// How one entry of a target or ignore list is compared with a module name (without ".weight").
enum class MatchKind : std::uint8_t {
    Exact,       // name == text (compressed-tensors names, AutoFP8 ignored_layers)
    Substring,   // text occurs in name (AutoAWQ modules_to_not_convert, transformers fp8)
    PathPrefix,  // name == text or text + "." occurs in name (transformers bitsandbytes skip modules)
    Glob,        // fnmatch of the name or of one of its parent modules (ModelOpt, mxfp4)
    Regex,       // Python re.match of the name ("re:" entries, GPTQModel dynamic keys)
    ClassName,   // the module's class name contains text, case-insensitive ("Linear")
};

// One entry of a target or ignore list.
struct ModuleMatcher {
    MatchKind kind = MatchKind::Exact;
    std::string text;                  // as written, without the "re:" / "+:" / "-:" prefix
    std::optional<NamePattern> regex;  // compiled when kind == Regex

    // True when the entry selects `module` whose class is `class_name`.
    bool matches(std::string_view module, std::string_view class_name) const;
};

// The KV-cache quantization a checkpoint declares (compressed-tensors kv_cache_scheme, ModelOpt
// kv_cache_quant_algo).
struct KvCacheDeclaration {
    std::string type;          // "float" or "int"
    int num_bits = 0;
    std::string strategy;      // "tensor", "attn_head", "channel", ...
    bool symmetric = true;
    bool dynamic = false;
    DType scale_dtype = DType::Fp32;  // k_scale / v_scale storage
    std::optional<KvFormat> format;   // quantplan's format when it has one (fp8 per tensor)
};

// A rule: modules it selects are stored with `scheme`, or left in the model dtype when `skip`.
struct QuantRule {
    std::string name;                    // "group_0", "default", "dynamic -:.*mlp.gate"
    std::vector<ModuleMatcher> targets;  // empty: every eligible module
    bool skip = false;
    Scheme scheme;
    std::string format;                  // on-disk format of this rule (e.g. "pack-quantized", "gemm")
    std::string description;             // one line, e.g. "int4 g128 zero point, AutoAWQ GEMM"
};

// The facts engines look at when they resolve a method, as the config states them.
struct MethodFacts {
    int bits = 0;                  // weight bits (0 unknown)
    std::int64_t group_size = 0;   // -1 per output channel, 0 unknown / not grouped
    bool symmetric = true;
    bool zero_point = false;       // stores zero points (AWQ zero_point, GPTQ sym=false)
    bool desc_act = false;         // GPTQ act-order
    bool weight_float = false;     // fp8 / fp4 weights
    bool block = false;            // 2-D weight blocks (fp8 weight_block_size, CT block strategy)
    std::string activation;        // "" (16-bit), "int8", "fp8", "fp4"
    bool activation_static = false;
    std::string version;           // AWQ version ("gemm", "gemv")
    std::string checkpoint_format; // GPTQ checkpoint_format ("gptq", "gptq_v2", "marlin")
    std::string format;            // compressed-tensors format of the first group
    std::string quant_algo;        // ModelOpt quant_algo ("FP8", "NVFP4")
};

// A checkpoint's quantization, parsed.
struct QuantizationConfig {
    std::string declared_method;   // quant_method as written, lower-cased ("" when none)
    QuantMethod method = QuantMethod::None;
    std::string source;            // where it was read, e.g. "config.json: quantization_config"
    DType model_dtype = DType::Bf16;  // torch_dtype: what unquantized tensors are stored in
    std::string model_type;        // config.json model_type ("" when not given)
    std::array<bool, kTensorRoleCount> eligible{};  // roles the exporter can quantize at all
    std::vector<ModuleMatcher> ignore;  // modules left unquantized
    std::vector<QuantRule> rules;       // first match wins (names before class names)
    std::optional<KvCacheDeclaration> kv_cache;
    MethodFacts facts;
    std::vector<std::string> notes;     // defaults assumed, packings not modelled
    std::string problem;                // unknown method: a sentence naming it (report still produced)
};

// The texts a checkpoint folder may hold; absent files are nullopt.
struct QuantConfigTexts {
    std::optional<std::string> config_json;         // config.json
    std::optional<std::string> hf_quant_config;     // hf_quant_config.json (ModelOpt)
    std::optional<std::string> quant_config;        // quant_config.json (older AutoAWQ)
    std::optional<std::string> quantize_config;     // quantize_config.json (AutoGPTQ)
};

// Parses whichever of the texts declares the quantization (config.json first). Throws Error naming
// the file and field for malformed JSON or a value a known method cannot take (AWQ at 3 bits, a
// negative group size, an unsupported regex). An unknown method is not an error: method Unknown,
// `problem` names it and every module stays unquantized.
QuantizationConfig parse_quantization_config(const QuantConfigTexts& texts);

// The model dtype a config.json declares (torch_dtype or dtype), bf16 when absent.
DType declared_model_dtype(std::string_view config_json_text);

// The class name a module of `role` has in a Hugging Face model ("Linear", "Embedding", "RMSNorm").
std::string_view module_class_name(TensorRole role);

// The rule that decides `module` (name without ".weight") of role `role`; nullptr when the module
// stays in the model dtype (role not eligible, ignored, matched by a skip rule, or by no rule).
const QuantRule* module_rule(const QuantizationConfig& config, std::string_view module, TensorRole role);

// The rule that stores inventory tensor `t`: module_rule of its module for a linear weight
// ("<module>.weight"); nullptr for everything else and for tensors no export quantizes
// (TensorInfo::never_quantized, fixed_dtype).
const QuantRule* tensor_rule(const QuantizationConfig& config, const TensorInfo& t);

}  // namespace quantplan
