#pragma once
// The headless error lab: a request (formats x granularities x methods on one layer), its parsers
// for the --errorsim-* options, and the report it produces. JSON lives in errorsim_json.h.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/errorsim/error_lab.h"

namespace quantplan::errorsim {

// A named method combination ("rtn", "gptq", "awq", "awq+gptq", "smoothquant", ...).
struct NamedMethod {
    std::string name;
    MethodToggles toggles;
};

// What the headless run computes: every format x granularity x method on one layer. Formats with
// a granularity fixed by their specification (nvfp4: 16, mxfp4: 32) run at that granularity only.
struct ErrorsimRequest {
    LayerSpec layer;
    std::vector<WeightQuantSpec> formats;   // default: int4 (asymmetric), int8 (symmetric)
    std::vector<GroupShape> granularities;  // default: per-tensor, per-channel, g128, g64, g32
    std::vector<NamedMethod> methods;       // default: rtn
    ActivationQuantSpec activations;        // default: 16-bit
    std::optional<std::string> tensor;      // "FILE.safetensors:NAME": real weights instead of synthetic
    std::optional<std::string> activation_tensor;  // "FILE.safetensors:NAME": supplied T x K activations (needs tensor)
};

// One computed row.
struct ErrorsimRow {
    std::string format;       // weight_format_name
    std::string granularity;  // granularity_name
    std::string method;       // NamedMethod::name
    WeightQuantSpec weights;
    ErrorLabResult result;
};

// One KV-cache format quantized on the synthetic KV tensor (the same outlier magnitude and seed).
struct KvRow {
    std::string format;  // the --kv name: fp8, fp8_e5m2, int8, int4
    KvLabConfig config;
    KvLabResult result;
};

// The report: the request as resolved, the layer's source, one row per combination, and the KV
// cache formats the planner prices (fp8 and fp8_e5m2 per tensor, int8 and int4 per token-head).
struct ErrorsimReport {
    ErrorsimRequest request;
    std::string source;  // "synthetic" or the tensor name and file
    std::int64_t out_features = 0;
    std::int64_t in_features = 0;
    std::vector<ErrorsimRow> rows;
    std::vector<KvRow> kv_cache;
};

// The default request (seed 003's INT4 and INT8 ladders, round to nearest, 16-bit activations).
ErrorsimRequest default_errorsim_request();

// Parses a comma-separated weight format list: int2..int8 (optionally -sym or -asym; integers
// below 8 bits default to asymmetric, int8 to symmetric), fp8 / fp8_e4m3, fp8_e5m2, fp4 / fp4_e2m1,
// nvfp4, mxfp4. Throws Error naming `option` for an unknown or empty entry.
std::vector<WeightQuantSpec> parse_weight_formats(std::string_view list, const std::string& option);

// Parses a comma-separated granularity list: tensor | per-tensor, channel | ch | per-channel,
// g<N> (N >= 1), block<R>x<C> or block<N>. Throws Error naming `option` for a group size that is
// not a positive integer or an unknown entry.
std::vector<GroupShape> parse_granularities(std::string_view list, const std::string& option);

// Parses a comma-separated method list: rtn, gptq, gptq-actorder, awq, awq-clip, awq+gptq,
// smoothquant (or sq), smoothquant+gptq; a smoothquant entry may carry its alpha as
// smoothquant@0.8. Throws Error naming `option` for an unknown method or a bad alpha.
std::vector<NamedMethod> parse_methods(std::string_view list, const std::string& option);

// Parses an activation setting: a16 | bf16 | fp16 (16-bit), or <format>[-tensor][-static][-asym]
// with <format> int8 (int2..int8), fp8 / fp8_e4m3, fp8_e5m2; per token and dynamic by default.
// Throws Error naming `option` for an unknown setting or static per-token scales.
ActivationQuantSpec parse_activation(std::string_view text, const std::string& option);

// Runs every combination of `request`. Reads the tensor's bytes when `request.tensor` is set.
// Throws Error naming the field for a bad request.
ErrorsimReport run_errorsim(const ErrorsimRequest& request);

// The report as a readable table with the decision log of the first row of each format and method.
std::string errorsim_table(const ErrorsimReport& report);

// The canonical name of an activation setting: "a16", "int8-token", "fp8_e4m3-tensor", "int8-static".
std::string activation_name(const ActivationQuantSpec& activations);

}  // namespace quantplan::errorsim
