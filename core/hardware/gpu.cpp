#include "core/hardware/gpu.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace quantplan {
namespace {

using nlohmann::json;

double number(const json& j, const char* key, const std::string& source, bool required) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(source + ": " + key, "missing");
        return 0.0;
    }
    if (!it->is_number()) throw Error(source + ": " + key, std::string("must be a number, got a ") + it->type_name());
    const double v = it->get<double>();
    if (!(v >= 0.0) || v > 1e30) throw Error(source + ": " + key, "must be a non-negative finite number");
    return v;
}

}  // namespace

double matmul_peak_flop_per_s(const GpuProfile& gpu, MatmulType type, Accumulate acc) {
    const PeakThroughput& p = gpu.peak;
    switch (type) {
        case MatmulType::Bf16: return p.bf16_fp32acc_flop_per_s;
        case MatmulType::Fp16: return acc == Accumulate::Fp16 && p.fp16_fp16acc_flop_per_s > 0 ? p.fp16_fp16acc_flop_per_s : p.fp16_fp32acc_flop_per_s;
        case MatmulType::Fp8: return acc == Accumulate::Fp16 && p.fp8_fp16acc_flop_per_s > 0 ? p.fp8_fp16acc_flop_per_s : p.fp8_fp32acc_flop_per_s;
        case MatmulType::Int8: return p.int8_op_per_s;
        case MatmulType::Int4: return p.int4_op_per_s;
        case MatmulType::Fp4: return p.fp4_flop_per_s;
    }
    return 0.0;
}

const char* matmul_type_name(MatmulType type) {
    switch (type) {
        case MatmulType::Bf16: return "bf16";
        case MatmulType::Fp16: return "fp16";
        case MatmulType::Fp8: return "fp8";
        case MatmulType::Int8: return "int8";
        case MatmulType::Int4: return "int4";
        case MatmulType::Fp4: return "fp4";
    }
    return "?";
}

double EfficiencyProfile::compute_efficiency_for(MatmulType type) const {
    const auto it = compute_efficiency_by_type.find(type);
    return it == compute_efficiency_by_type.end() ? compute_efficiency : it->second;
}

KernelQuality parse_kernel_quality(std::string_view name) {
    if (name == "fused" || name == "marlin") return KernelQuality::Fused;
    if (name == "generic") return KernelQuality::Generic;
    throw Error("--kernel", "unknown kernel quality '" + std::string(name) + "' (fused, generic)");
}

const char* kernel_quality_name(KernelQuality k) { return k == KernelQuality::Fused ? "fused" : "generic"; }

EfficiencyProfile builtin_efficiency_profile(std::string_view name) {
    EfficiencyProfile p;
    p.name = std::string(name);
    if (name == "ideal") return p;
    if (name == "realistic") {
        // The values under seed 003's simulation. They sit inside the published anchors:
        // cuBLAS bf16 at M=1 reaches 0.86 of H100 bandwidth (kernels.md A6), a streaming kernel
        // 0.79 of H200's (A12); large GEMMs 0.70-0.80 of peak (A8), decode-sized ones far less.
        p.bandwidth_efficiency = 0.80;
        p.compute_efficiency = 0.55;
        p.fused_kernel_efficiency = 0.95;    // seed 003: INT4 fused reads 0.95x of bf16 when compute-bound
        p.generic_kernel_efficiency = 0.55;  // seed 003: generic reads 0.55x (AutoAWQ #106: ~0.5 at batch 256)
        return p;
    }
    throw Error("--profile", "unknown efficiency profile '" + std::string(name) + "' (ideal, realistic, or measured with --calibration FILE)");
}

GpuProfile parse_gpu_profile(std::string_view text, const std::string& source) {
    json j;
    try {
        j = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e400
        throw Error(source, std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw Error(source, "a GPU profile must be a JSON object");
    GpuProfile g;
    const auto str = [&](const char* key, bool required) -> std::string {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_string()) {
            if (required) throw Error(source + ": " + key, "missing (a string)");
            return {};
        }
        return it->get<std::string>();
    };
    g.id = str("id", true);
    g.name = str("name", false);
    if (g.name.empty()) g.name = g.id;
    g.vendor = str("vendor", false);
    g.compute_capability = str("compute_capability", false);
    g.interconnect = str("interconnect", false);
    g.memory_spec_bytes = static_cast<std::uint64_t>(number(j, "memory_spec_bytes", source, true));
    g.memory_usable_bytes = static_cast<std::uint64_t>(number(j, "memory_usable_bytes", source, false));
    if (g.memory_usable_bytes == 0) g.memory_usable_bytes = g.memory_spec_bytes;
    g.memory_bandwidth_bytes_per_s = number(j, "memory_bandwidth_bytes_per_s", source, true);
    if (g.memory_bandwidth_bytes_per_s <= 0) throw Error(source + ": memory_bandwidth_bytes_per_s", "must be positive");
    if (g.memory_usable_bytes == 0) throw Error(source + ": memory_spec_bytes", "must be positive");
    g.sm_count = static_cast<std::int64_t>(number(j, "sm_count", source, false));
    g.l2_bytes = static_cast<std::uint64_t>(number(j, "l2_bytes", source, false));
    g.interconnect_bytes_per_s = number(j, "interconnect_bytes_per_s", source, false);
    g.host_link_bytes_per_s = number(j, "host_link_bytes_per_s", source, false);
    if (const auto it = j.find("p2p"); it != j.end()) {
        if (!it->is_boolean()) throw Error(source + ": p2p", "must be true or false");
        g.p2p = it->get<bool>();
    }
    g.internode_bytes_per_s = number(j, "internode_bytes_per_s", source, false);
    if (!j.contains("peak") || !j["peak"].is_object()) throw Error(source + ": peak", "missing (an object of FLOP/s by type)");
    const json& p = j["peak"];
    const std::string ps = source + ": peak";
    g.peak.fp32_flop_per_s = number(p, "fp32_flop_per_s", ps, false);
    g.peak.tf32_flop_per_s = number(p, "tf32_flop_per_s", ps, false);
    g.peak.bf16_fp32acc_flop_per_s = number(p, "bf16_fp32acc_flop_per_s", ps, true);
    g.peak.fp16_fp32acc_flop_per_s = number(p, "fp16_fp32acc_flop_per_s", ps, false);
    g.peak.fp16_fp16acc_flop_per_s = number(p, "fp16_fp16acc_flop_per_s", ps, false);
    g.peak.fp8_fp32acc_flop_per_s = number(p, "fp8_fp32acc_flop_per_s", ps, false);
    g.peak.fp8_fp16acc_flop_per_s = number(p, "fp8_fp16acc_flop_per_s", ps, false);
    g.peak.int8_op_per_s = number(p, "int8_op_per_s", ps, false);
    g.peak.int4_op_per_s = number(p, "int4_op_per_s", ps, false);
    g.peak.fp4_flop_per_s = number(p, "fp4_flop_per_s", ps, false);
    if (g.peak.bf16_fp32acc_flop_per_s <= 0) throw Error(ps + ": bf16_fp32acc_flop_per_s", "must be positive");
    if (g.peak.fp16_fp32acc_flop_per_s == 0) g.peak.fp16_fp32acc_flop_per_s = g.peak.bf16_fp32acc_flop_per_s;
    if (j.contains("sources") && j["sources"].is_object())
        for (const auto& [k, v] : j["sources"].items())
            if (v.is_string()) g.sources[k] = v.get<std::string>();
    return g;
}

std::vector<GpuProfile> load_gpu_profiles(const std::filesystem::path& dir) {
    std::vector<GpuProfile> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        out.push_back(parse_gpu_profile(ss.str(), entry.path().string()));
    }
    if (ec) throw Error(dir.string(), "cannot list GPU profiles: " + ec.message());
    std::sort(out.begin(), out.end(), [](const GpuProfile& a, const GpuProfile& b) { return a.id < b.id; });
    return out;
}

GpuProfile resolve_gpu(std::string_view argument, const std::filesystem::path& gpus_dir) {
    const std::string arg(argument);
    std::error_code ec;
    if ((arg.find('/') != std::string::npos || arg.ends_with(".json")) && std::filesystem::is_regular_file(arg, ec)) {
        if (std::filesystem::file_size(arg, ec) > (1u << 20)) throw Error("--gpu", "'" + arg + "' is too large for a GPU profile");
        std::ifstream in(arg, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        return parse_gpu_profile(ss.str(), arg);
    }
    std::string key = arg;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::vector<GpuProfile> all = load_gpu_profiles(gpus_dir);
    std::string names;
    for (const GpuProfile& g : all) {
        if (g.id == key) return g;
        names += (names.empty() ? "" : ", ") + g.id;
    }
    throw Error("--gpu", "unknown GPU '" + arg + "' (bundled: " + names + "; or give a path to a profile .json)");
}

}  // namespace quantplan
