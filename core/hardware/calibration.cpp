#include "core/hardware/calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/stats.h"

namespace quantplan {
namespace {

using nlohmann::json;

// Largest number of measurements or checks a file may hold (a full --validate run writes a few
// hundred); keeps a malformed file from sizing allocations.
constexpr std::size_t kMaxCalibrationRows = 200000;

// Efficiencies outside (0, kMaxEfficiency] are refused: above 1 is possible (cache effects,
// a datasheet figure below the real one) but not by a factor of two.
constexpr double kMaxEfficiency = 2.0;

const std::vector<CalibrationKernelTraits>& kernel_table() {
    static const std::vector<CalibrationKernelTraits> table{
        {"probe_read", CalibrationKernelKind::Stream, MatmulType::Bf16, false, KernelQuality::Fused, "bandwidth probe: read (sum of 16-byte loads)"},
        {"probe_copy", CalibrationKernelKind::Stream, MatmulType::Bf16, false, KernelQuality::Fused, "bandwidth probe: copy a = b"},
        {"probe_triad", CalibrationKernelKind::Stream, MatmulType::Bf16, false, KernelQuality::Fused, "bandwidth probe: triad a = b + s c"},
        {"gemm_bf16", CalibrationKernelKind::Gemm, MatmulType::Bf16, false, KernelQuality::Fused, "cuBLASLt bf16 GEMM (baseline)"},
        {"w4a16_fused", CalibrationKernelKind::Gemm, MatmulType::Bf16, true, KernelQuality::Fused, "INT4 weights, fused group dequantization"},
        {"w4a16_generic", CalibrationKernelKind::Gemm, MatmulType::Bf16, true, KernelQuality::Generic,
         "INT4 weights: dequantize kernel to bf16, then cuBLASLt bf16 GEMM (both timed)"},
        {"w4a16_dequantize", CalibrationKernelKind::Stream, MatmulType::Bf16, false, KernelQuality::Fused, "INT4 -> bf16 dequantize kernel alone"},
        {"w8a8_int8", CalibrationKernelKind::Gemm, MatmulType::Int8, false, KernelQuality::Fused,
         "per-token INT8 activation quantization, cuBLASLt INT8 GEMM, scale epilogue (all timed)"},
        {"w8a8_fp8", CalibrationKernelKind::Gemm, MatmulType::Fp8, false, KernelQuality::Fused,
         "per-token FP8 activation quantization, cuBLASLt FP8 GEMM with outer-vector scales (all timed)"},
        {"attention_bf16", CalibrationKernelKind::Attention, MatmulType::Bf16, false, KernelQuality::Fused, "decode attention over a bf16 KV cache"},
        {"attention_fp8", CalibrationKernelKind::Attention, MatmulType::Bf16, false, KernelQuality::Fused, "decode attention over an FP8 E4M3 KV cache"},
        {"attention_int8", CalibrationKernelKind::Attention, MatmulType::Bf16, false, KernelQuality::Fused, "decode attention over an INT8 KV cache"},
    };
    return table;
}


double ideal_memory_time_s(const KernelMeasurement& m, const GpuProfile& gpu) {
    return static_cast<double>(m.bytes) / gpu.memory_bandwidth_bytes_per_s;
}

double ideal_compute_time_s(const KernelMeasurement& m, const CalibrationKernelTraits& t, const GpuProfile& gpu) {
    if (t.kind == CalibrationKernelKind::Stream || m.flop <= 0) return 0.0;
    const double peak = matmul_peak_flop_per_s(gpu, t.matmul);
    return peak > 0 ? m.flop / peak : 0.0;
}

bool memory_bound(const KernelMeasurement& m, const CalibrationKernelTraits& t, const GpuProfile& gpu) {
    return ideal_memory_time_s(m, gpu) >= kCalibrationBoundMargin * ideal_compute_time_s(m, t, gpu);
}

bool compute_bound(const KernelMeasurement& m, const CalibrationKernelTraits& t, const GpuProfile& gpu) {
    const double c = ideal_compute_time_s(m, t, gpu);
    return c > 0 && c >= kCalibrationBoundMargin * ideal_memory_time_s(m, gpu);
}

double relative_error(double predicted, double measured) { return measured > 0 ? std::fabs(predicted - measured) / measured : 0.0; }

// --- JSON reading helpers: every failure names the source and the path ---

const json& member(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) throw Error(path + key, "missing");
    return *it;
}

double number_at(const json& j, const char* key, const std::string& path, bool required, double lo = 0.0, double hi = 1e30) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(path + key, "missing");
        return 0.0;
    }
    if (!it->is_number()) throw Error(path + key, "must be a number, got " + it->dump());
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < lo || v > hi) throw Error(path + key, "out of range: " + it->dump());
    return v;
}

std::int64_t integer_at(const json& j, const char* key, const std::string& path, bool required) {
    const double v = number_at(j, key, path, required, 0.0, 9.0e15);
    if (v != std::floor(v)) throw Error(path + key, "must be a whole number");
    return static_cast<std::int64_t>(v);
}

std::string string_at(const json& j, const char* key, const std::string& path, bool required) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required) throw Error(path + key, "missing (a string)");
        return {};
    }
    if (!it->is_string()) throw Error(path + key, "must be a string");
    return it->get<std::string>();
}

bool bool_at(const json& j, const char* key, const std::string& path) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return false;
    if (!it->is_boolean()) throw Error(path + key, "must be true or false");
    return it->get<bool>();
}

const json& array_at(const json& j, const char* key, const std::string& path) {
    static const json empty = json::array();
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return empty;
    if (!it->is_array()) throw Error(path + key, "must be an array");
    if (it->size() > kMaxCalibrationRows) throw Error(path + key, "has more than " + std::to_string(kMaxCalibrationRows) + " entries");
    return *it;
}

std::optional<MatmulType> matmul_type_from_name(std::string_view name) {
    for (const MatmulType t : {MatmulType::Bf16, MatmulType::Fp16, MatmulType::Fp8, MatmulType::Int8, MatmulType::Int4, MatmulType::Fp4})
        if (name == matmul_type_name(t)) return t;
    return std::nullopt;
}

std::vector<std::string> name_tokens(std::string_view name) {
    static const std::set<std::string> generic{"NVIDIA", "GEFORCE", "HBM3", "HBM3E", "SXM", "SXM4", "SXM5", "GENERATION", "HGX"};
    std::vector<std::string> out;
    std::string cur;
    const auto flush = [&] {
        const bool memory_size = cur.size() > 2 && cur.ends_with("GB");
        if (cur.size() >= 2 && !generic.contains(cur) && !memory_size) out.push_back(cur);
        cur.clear();
    };
    for (const char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c))) cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
        else flush();
    }
    flush();
    return out;
}

}  // namespace

const std::vector<CalibrationKernelTraits>& calibration_kernels() { return kernel_table(); }

const CalibrationKernelTraits& calibration_kernel_traits(std::string_view name) {
    for (const CalibrationKernelTraits& t : kernel_table())
        if (t.name == name) return t;
    throw Error("kernel", "unknown calibration kernel '" + std::string(name) + "'");
}

double predict_kernel_time_s(const KernelMeasurement& m, const GpuProfile& gpu, const EfficiencyProfile& eff) {
    const CalibrationKernelTraits& t = calibration_kernel_traits(m.kernel);
    const double memory_s = static_cast<double>(m.bytes) / (gpu.memory_bandwidth_bytes_per_s * eff.bandwidth_efficiency);
    if (t.kind == CalibrationKernelKind::Stream || m.flop <= 0) return memory_s;
    double rate = matmul_peak_flop_per_s(gpu, t.matmul) * eff.compute_efficiency_for(t.matmul);
    if (t.weight_only) rate *= t.quality == KernelQuality::Fused ? eff.fused_kernel_efficiency : eff.generic_kernel_efficiency;
    const double compute_s = rate > 0 ? m.flop / rate : 0.0;
    return std::max(memory_s, compute_s);
}

EfficiencyProfile fit_measured_profile(const std::vector<KernelMeasurement>& ms, const GpuProfile& gpu, double probe_read_bytes_per_s) {
    EfficiencyProfile p = builtin_efficiency_profile("realistic");
    p.name = "measured";
    std::vector<double> bandwidth;
    std::map<MatmulType, std::vector<double>> compute;
    for (const KernelMeasurement& m : ms) {
        const CalibrationKernelTraits& t = calibration_kernel_traits(m.kernel);
        if (m.measured_time_s <= 0) continue;
        // Kernels the planner prices (GEMMs, attention) set the bandwidth factor; probes bound it.
        // The generic W4A16 path moves its dequantized copy too (kernels.md (b)), bytes the
        // roofline does not count, so it would drag the factor down for every scheme.
        const bool generic = t.weight_only && t.quality == KernelQuality::Generic;
        if (t.kind != CalibrationKernelKind::Stream && !generic && memory_bound(m, t, gpu))
            bandwidth.push_back(m.achieved_bytes_per_s() / gpu.memory_bandwidth_bytes_per_s);
        if (t.kind == CalibrationKernelKind::Gemm && !t.weight_only && compute_bound(m, t, gpu)) {
            const double peak = matmul_peak_flop_per_s(gpu, t.matmul);
            if (peak > 0) compute[t.matmul].push_back(m.achieved_flop_per_s() / peak);
        }
    }
    if (!bandwidth.empty()) {
        p.bandwidth_efficiency = median(bandwidth);
    } else if (probe_read_bytes_per_s > 0) {
        p.bandwidth_efficiency = probe_read_bytes_per_s / gpu.memory_bandwidth_bytes_per_s;
    } else {
        throw Error("calibration", "no memory-bound measurement and no probe reading to fit the bandwidth efficiency from");
    }
    for (const auto& [type, values] : compute) p.compute_efficiency_by_type[type] = median(values);
    const auto bf16 = p.compute_efficiency_by_type.find(MatmulType::Bf16);
    if (bf16 != p.compute_efficiency_by_type.end()) p.compute_efficiency = bf16->second;

    // Weight-only factors: achieved rate relative to what a bf16 GEMM reaches when compute-bound.
    const double bf16_rate = matmul_peak_flop_per_s(gpu, MatmulType::Bf16) * p.compute_efficiency_for(MatmulType::Bf16);
    std::vector<double> fused, generic;
    for (const KernelMeasurement& m : ms) {
        const CalibrationKernelTraits& t = calibration_kernel_traits(m.kernel);
        if (!t.weight_only || m.measured_time_s <= 0 || !compute_bound(m, t, gpu) || bf16_rate <= 0) continue;
        (t.quality == KernelQuality::Fused ? fused : generic).push_back(m.achieved_flop_per_s() / bf16_rate);
    }
    if (!fused.empty()) p.fused_kernel_efficiency = median(fused);
    if (!generic.empty()) p.generic_kernel_efficiency = median(generic);
    return p;
}

void finish_calibration(Calibration& c, const GpuProfile& gpu) {
    c.profile = fit_measured_profile(c.measurements, gpu, c.probe_read_bytes_per_s);
    const EfficiencyProfile realistic = builtin_efficiency_profile("realistic");
    std::vector<double> err_measured, err_realistic;
    std::map<std::string, KernelFit> fits;
    std::map<std::string, std::vector<double>> fit_bw, fit_compute, fit_err_m, fit_err_r;
    for (KernelMeasurement& m : c.measurements) {
        const CalibrationKernelTraits& t = calibration_kernel_traits(m.kernel);
        m.predicted_time_s = predict_kernel_time_s(m, gpu, realistic);
        m.fitted_time_s = predict_kernel_time_s(m, gpu, c.profile);
        if (m.measured_time_s <= 0) continue;
        err_measured.push_back(relative_error(m.fitted_time_s, m.measured_time_s));
        err_realistic.push_back(relative_error(m.predicted_time_s, m.measured_time_s));
        fit_err_m[m.kernel].push_back(err_measured.back());
        fit_err_r[m.kernel].push_back(err_realistic.back());
        if (memory_bound(m, t, gpu)) fit_bw[m.kernel].push_back(m.achieved_bytes_per_s() / gpu.memory_bandwidth_bytes_per_s);
        if (compute_bound(m, t, gpu)) fit_compute[m.kernel].push_back(m.achieved_flop_per_s() / matmul_peak_flop_per_s(gpu, t.matmul));
    }
    c.median_abs_relative_error_measured = median(err_measured);
    c.median_abs_relative_error_realistic = median(err_realistic);
    c.kernel_fits.clear();
    for (const CalibrationKernelTraits& t : kernel_table()) {
        const std::string name(t.name);
        if (!fit_err_m.contains(name)) continue;
        KernelFit f;
        f.kernel = name;
        f.points = static_cast<std::int64_t>(fit_err_m[name].size());
        f.bandwidth_efficiency = median(fit_bw[name]);
        f.compute_efficiency = median(fit_compute[name]);
        f.median_abs_relative_error_measured = median(fit_err_m[name]);
        f.median_abs_relative_error_realistic = median(fit_err_r[name]);
        c.kernel_fits.push_back(f);
    }
}

json kernel_fit_json(const KernelFit& f) {
    return {{"kernel", f.kernel},
            {"points", f.points},
            {"bandwidth_efficiency", f.bandwidth_efficiency},
            {"compute_efficiency", f.compute_efficiency},
            {"median_abs_relative_error_measured", f.median_abs_relative_error_measured},
            {"median_abs_relative_error_realistic", f.median_abs_relative_error_realistic}};
}

std::string calibration_to_json(const Calibration& c) {
    json j;
    j["format"] = "quantplan-calibration";
    j["format_version"] = c.format_version;
    j["created_by"] = c.created_by;
    j["model"] = c.model;
    j["gpu_profile"] = c.gpu_profile;
    const CalibrationDevice& d = c.device;
    j["device"] = {{"name", d.name},
                   {"compute_capability", d.compute_capability},
                   {"sm_count", d.sm_count},
                   {"memory_bytes", d.memory_bytes},
                   {"l2_bytes", d.l2_bytes},
                   {"sm_clock_khz", d.sm_clock_khz},
                   {"memory_clock_khz", d.memory_clock_khz},
                   {"memory_bus_bits", d.memory_bus_bits},
                   {"ecc_enabled", d.ecc_enabled},
                   {"driver_version", d.driver_version},
                   {"runtime_version", d.runtime_version}};
    j["probe"] = {{"read_bytes_per_s", c.probe_read_bytes_per_s},
                  {"copy_bytes_per_s", c.probe_copy_bytes_per_s},
                  {"triad_bytes_per_s", c.probe_triad_bytes_per_s},
                  {"buffer_bytes", c.probe_buffer_bytes}};
    json checks = json::array();
    for (const KernelCheck& k : c.checks)
        checks.push_back({{"kernel", k.kernel},
                          {"shape", k.shape},
                          {"passed", k.passed},
                          {"skipped", k.skipped},
                          {"worst_ratio", std::isfinite(k.worst_ratio) ? k.worst_ratio : 1e30},
                          {"max_abs_error", std::isfinite(k.max_abs_error) ? k.max_abs_error : 1e30},
                          {"tolerance", k.tolerance},
                          {"detail", k.detail}});
    j["checks"] = std::move(checks);
    json rows = json::array();
    for (const KernelMeasurement& m : c.measurements)
        rows.push_back({{"kernel", m.kernel},
                        {"shape", m.shape},
                        {"batch", m.batch},
                        {"n", m.n},
                        {"k", m.k},
                        {"context_tokens", m.context_tokens},
                        {"bytes", m.bytes},
                        {"flop", m.flop},
                        {"measured_time_s", m.measured_time_s},
                        {"predicted_time_s", m.predicted_time_s},
                        {"fitted_time_s", m.fitted_time_s},
                        {"achieved_bytes_per_s", m.achieved_bytes_per_s()},
                        {"achieved_flop_per_s", m.achieved_flop_per_s()}});
    j["measurements"] = std::move(rows);
    json fits = json::array();
    for (const KernelFit& f : c.kernel_fits) fits.push_back(kernel_fit_json(f));
    j["kernel_fits"] = std::move(fits);
    json by_type = json::object();
    for (const auto& [type, v] : c.profile.compute_efficiency_by_type) by_type[matmul_type_name(type)] = v;
    j["profile"] = {{"name", c.profile.name},
                    {"bandwidth_efficiency", c.profile.bandwidth_efficiency},
                    {"compute_efficiency", c.profile.compute_efficiency},
                    {"compute_efficiency_by_type", std::move(by_type)},
                    {"fused_kernel_efficiency", c.profile.fused_kernel_efficiency},
                    {"generic_kernel_efficiency", c.profile.generic_kernel_efficiency}};
    j["prediction_error"] = {{"median_abs_relative_error_measured", c.median_abs_relative_error_measured},
                             {"median_abs_relative_error_realistic", c.median_abs_relative_error_realistic}};
    return j.dump(2) + "\n";
}

Calibration parse_calibration(std::string_view text, const std::string& source) {
    json j;
    try {
        j = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        throw Error(source, std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw Error(source, "a calibration file must be a JSON object");
    const std::string root = source + ": ";
    if (string_at(j, "format", root, true) != "quantplan-calibration") throw Error(root + "format", "must be \"quantplan-calibration\"");
    Calibration c;
    c.format_version = static_cast<int>(integer_at(j, "format_version", root, true));
    if (c.format_version != 1) throw Error(root + "format_version", "version " + std::to_string(c.format_version) + " is not supported (1)");
    c.created_by = string_at(j, "created_by", root, false);
    c.model = string_at(j, "model", root, false);
    c.gpu_profile = string_at(j, "gpu_profile", root, false);

    if (j.contains("device") && j["device"].is_object()) {
        const json& d = j["device"];
        const std::string p = root + "device.";
        c.device.name = string_at(d, "name", p, false);
        c.device.compute_capability = string_at(d, "compute_capability", p, false);
        c.device.sm_count = integer_at(d, "sm_count", p, false);
        c.device.memory_bytes = static_cast<std::uint64_t>(integer_at(d, "memory_bytes", p, false));
        c.device.l2_bytes = static_cast<std::uint64_t>(integer_at(d, "l2_bytes", p, false));
        c.device.sm_clock_khz = integer_at(d, "sm_clock_khz", p, false);
        c.device.memory_clock_khz = integer_at(d, "memory_clock_khz", p, false);
        c.device.memory_bus_bits = integer_at(d, "memory_bus_bits", p, false);
        c.device.ecc_enabled = bool_at(d, "ecc_enabled", p);
        c.device.driver_version = string_at(d, "driver_version", p, false);
        c.device.runtime_version = string_at(d, "runtime_version", p, false);
    }
    if (j.contains("probe") && j["probe"].is_object()) {
        const json& p = j["probe"];
        const std::string path = root + "probe.";
        c.probe_read_bytes_per_s = number_at(p, "read_bytes_per_s", path, false);
        c.probe_copy_bytes_per_s = number_at(p, "copy_bytes_per_s", path, false);
        c.probe_triad_bytes_per_s = number_at(p, "triad_bytes_per_s", path, false);
        c.probe_buffer_bytes = static_cast<std::uint64_t>(integer_at(p, "buffer_bytes", path, false));
    }
    const json& checks = array_at(j, "checks", root);
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const json& e = checks[i];
        const std::string p = root + "checks[" + std::to_string(i) + "].";
        if (!e.is_object()) throw Error(p.substr(0, p.size() - 1), "must be an object");
        KernelCheck k;
        k.kernel = string_at(e, "kernel", p, true);
        k.shape = string_at(e, "shape", p, false);
        k.passed = bool_at(e, "passed", p);
        k.skipped = bool_at(e, "skipped", p);
        k.worst_ratio = number_at(e, "worst_ratio", p, false);
        k.max_abs_error = number_at(e, "max_abs_error", p, false);
        k.tolerance = string_at(e, "tolerance", p, false);
        k.detail = string_at(e, "detail", p, false);
        c.checks.push_back(std::move(k));
    }
    const json& rows = array_at(j, "measurements", root);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const json& e = rows[i];
        const std::string p = root + "measurements[" + std::to_string(i) + "].";
        if (!e.is_object()) throw Error(p.substr(0, p.size() - 1), "must be an object");
        KernelMeasurement m;
        m.kernel = string_at(e, "kernel", p, true);
        try {
            (void)calibration_kernel_traits(m.kernel);
        } catch (const Error&) {
            throw Error(p + "kernel", "unknown kernel '" + m.kernel + "'");
        }
        m.shape = string_at(e, "shape", p, false);
        m.batch = integer_at(e, "batch", p, false);
        m.n = integer_at(e, "n", p, false);
        m.k = integer_at(e, "k", p, false);
        m.context_tokens = integer_at(e, "context_tokens", p, false);
        m.bytes = static_cast<std::uint64_t>(integer_at(e, "bytes", p, true));
        m.flop = number_at(e, "flop", p, false);
        m.measured_time_s = number_at(e, "measured_time_s", p, true, 0.0, 1e6);
        m.predicted_time_s = number_at(e, "predicted_time_s", p, false, 0.0, 1e6);
        m.fitted_time_s = number_at(e, "fitted_time_s", p, false, 0.0, 1e6);
        c.measurements.push_back(std::move(m));
    }
    const json& fits = array_at(j, "kernel_fits", root);
    for (std::size_t i = 0; i < fits.size(); ++i) {
        const json& e = fits[i];
        const std::string p = root + "kernel_fits[" + std::to_string(i) + "].";
        if (!e.is_object()) throw Error(p.substr(0, p.size() - 1), "must be an object");
        KernelFit f;
        f.kernel = string_at(e, "kernel", p, true);
        f.points = integer_at(e, "points", p, false);
        f.bandwidth_efficiency = number_at(e, "bandwidth_efficiency", p, false);
        f.compute_efficiency = number_at(e, "compute_efficiency", p, false);
        f.median_abs_relative_error_measured = number_at(e, "median_abs_relative_error_measured", p, false);
        f.median_abs_relative_error_realistic = number_at(e, "median_abs_relative_error_realistic", p, false);
        c.kernel_fits.push_back(std::move(f));
    }

    const json& prof = member(j, "profile", root);
    if (!prof.is_object()) throw Error(root + "profile", "must be an object");
    const std::string pp = root + "profile.";
    const auto efficiency = [&](const json& obj, const char* key, const std::string& path) {
        const double v = number_at(obj, key, path, true, 0.0, kMaxEfficiency);
        if (!(v > 0)) throw Error(path + key, "must be positive");
        return v;
    };
    c.profile.name = "measured";
    c.profile.bandwidth_efficiency = efficiency(prof, "bandwidth_efficiency", pp);
    c.profile.compute_efficiency = efficiency(prof, "compute_efficiency", pp);
    c.profile.fused_kernel_efficiency = efficiency(prof, "fused_kernel_efficiency", pp);
    c.profile.generic_kernel_efficiency = efficiency(prof, "generic_kernel_efficiency", pp);
    if (prof.contains("compute_efficiency_by_type") && !prof["compute_efficiency_by_type"].is_null()) {
        const json& by = prof["compute_efficiency_by_type"];
        const std::string bp = pp + "compute_efficiency_by_type.";
        if (!by.is_object()) throw Error(pp + "compute_efficiency_by_type", "must be an object of matmul type -> efficiency");
        for (const auto& [key, value] : by.items()) {
            const std::optional<MatmulType> type = matmul_type_from_name(key);
            if (!type) throw Error(bp + key, "unknown matmul type (bf16, fp16, fp8, int8, int4, fp4)");
            c.profile.compute_efficiency_by_type[*type] = efficiency(by, key.c_str(), bp);
        }
    }
    if (j.contains("prediction_error") && j["prediction_error"].is_object()) {
        const json& e = j["prediction_error"];
        c.median_abs_relative_error_measured = number_at(e, "median_abs_relative_error_measured", root + "prediction_error.", false);
        c.median_abs_relative_error_realistic = number_at(e, "median_abs_relative_error_realistic", root + "prediction_error.", false);
    }
    return c;
}

Calibration load_calibration(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error("--calibration", "'" + path.string() + "' is not a readable file");
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) throw Error("--calibration", "cannot read '" + path.string() + "': " + ec.message());
    if (size > kMaxCalibrationFileBytes) throw Error("--calibration", "'" + path.string() + "' is larger than 64 MiB, not a calibration file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("--calibration", "cannot open '" + path.string() + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_calibration(ss.str(), "calibration file " + path.string());
}

std::optional<std::string> match_gpu_profile(const CalibrationDevice& device, const std::vector<GpuProfile>& profiles) {
    std::vector<const GpuProfile*> same_cc;
    for (const GpuProfile& g : profiles)
        if (!device.compute_capability.empty() && g.compute_capability == device.compute_capability) same_cc.push_back(&g);
    if (same_cc.empty()) return std::nullopt;
    std::vector<const GpuProfile*> candidates;
    for (const GpuProfile* g : same_cc)
        if (g->sm_count == 0 || device.sm_count == 0 || g->sm_count == device.sm_count) candidates.push_back(g);
    if (candidates.empty()) candidates = same_cc;
    const std::vector<std::string> device_tokens = name_tokens(device.name);
    const GpuProfile* best = nullptr;
    std::size_t best_common = 0;
    double best_gap = 0;
    for (const GpuProfile* g : candidates) {
        std::size_t common = 0;
        for (const std::string& t : name_tokens(g->name))
            if (std::find(device_tokens.begin(), device_tokens.end(), t) != device_tokens.end()) ++common;
        const double gap = std::fabs(static_cast<double>(g->memory_usable_bytes) - static_cast<double>(device.memory_bytes));
        if (!best || common > best_common || (common == best_common && gap < best_gap)) {
            best = g;
            best_common = common;
            best_gap = gap;
        }
    }
    return best->id;
}

std::vector<LinearShape> model_linear_shapes(const ModelConfig& m) {
    std::vector<LinearShape> raw;
    raw.push_back({"qkv_proj", m.q_dim() + 2 * m.kv_dim(), m.hidden_size});
    raw.push_back({"o_proj", m.hidden_size, m.q_dim()});
    bool dense_mlp = !m.is_moe() || !m.dense_layers.empty();
    if (dense_mlp && m.intermediate_size > 0) {
        raw.push_back({"gate_up_proj", 2 * m.intermediate_size, m.hidden_size});
        raw.push_back({"down_proj", m.hidden_size, m.intermediate_size});
    }
    if (m.is_moe() && m.moe_intermediate_size > 0) {
        raw.push_back({"expert_gate_up_proj", 2 * m.moe_intermediate_size, m.hidden_size});
        raw.push_back({"expert_down_proj", m.hidden_size, m.moe_intermediate_size});
    }
    if (m.shared_expert_intermediate_size > 0) {
        raw.push_back({"shared_expert_gate_up_proj", 2 * m.shared_expert_intermediate_size, m.hidden_size});
        raw.push_back({"shared_expert_down_proj", m.hidden_size, m.shared_expert_intermediate_size});
    }
    std::vector<LinearShape> out;
    for (const LinearShape& s : raw) {
        if (s.n <= 0 || s.k <= 0) continue;
        const bool seen = std::any_of(out.begin(), out.end(), [&](const LinearShape& o) { return o.n == s.n && o.k == s.k; });
        if (!seen) out.push_back(s);
    }
    return out;
}

}  // namespace quantplan
