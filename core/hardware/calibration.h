#pragma once
// Calibration files: what `quantplan --validate` measured on a real GPU, the roofline's prediction
// of each measurement, and the `measured` efficiency profile fitted from them (docs/kernels.md).
//
// Each measurement is one kernel at one shape and batch, with the bytes it must move and the FLOPs
// it must do counted the way the roofline counts them, so that a prediction is
// max(bytes / (bandwidth x bandwidth_efficiency), flop / (peak x compute efficiency x kernel factor)).
// The fit reads the efficiencies back from the measurements: the median achieved fraction of
// bandwidth over memory-bound points, of peak over compute-bound points, per matmul type, and the
// fused / generic weight-only factors relative to the bf16 GEMM.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// What a measured kernel is on the roofline.
enum class CalibrationKernelKind : std::uint8_t {
    Stream,     // bandwidth probe or dequantize: bytes only
    Gemm,       // a linear layer Y[M][N] = X[M][K] W^T
    Attention,  // decode attention over a KV cache (runs at the bf16 rate, as the roofline prices it)
};

// One row of the table of kernels a calibration file may name.
struct CalibrationKernelTraits {
    std::string_view name;                   // e.g. "w4a16_fused"
    CalibrationKernelKind kind;
    MatmulType matmul;                       // rate the FLOPs run at
    bool weight_only;                        // pays the fused / generic factor when compute-bound
    KernelQuality quality;                   // which factor (weight_only only)
    std::string_view description;
};

// Every kernel name --validate writes, in display order.
const std::vector<CalibrationKernelTraits>& calibration_kernels();

// The traits of `name`; throws Error("kernel") for a name not in the table.
const CalibrationKernelTraits& calibration_kernel_traits(std::string_view name);

// One timed kernel at one shape and batch.
struct KernelMeasurement {
    std::string kernel;                 // a name from calibration_kernels()
    std::string shape;                  // label: a model projection ("qkv_proj"), "8192x8192", "ctx8192"
    std::int64_t batch = 0;             // GEMM rows M, or sequences for attention; 0 for streams
    std::int64_t n = 0;                 // GEMM output channels (0 otherwise)
    std::int64_t k = 0;                 // GEMM input channels (0 otherwise)
    std::int64_t context_tokens = 0;    // attention context per sequence (0 otherwise)
    std::uint64_t bytes = 0;            // bytes the kernel must move (roofline count)
    double flop = 0;                    // FLOPs it must do (OPs for integer GEMMs)
    double measured_time_s = 0;         // median of the timed repeats
    double predicted_time_s = 0;        // roofline prediction with the `realistic` profile
    double fitted_time_s = 0;           // roofline prediction with the fitted `measured` profile

    double achieved_bytes_per_s() const { return measured_time_s > 0 ? static_cast<double>(bytes) / measured_time_s : 0.0; }
    double achieved_flop_per_s() const { return measured_time_s > 0 ? flop / measured_time_s : 0.0; }
};

// A kernel's output checked against its host reference before it was timed.
struct KernelCheck {
    std::string kernel;       // kernel name (a calibration kernel or a helper: "kv_write_fp8", "quantize_rows_int8", ...)
    std::string shape;        // what was checked
    bool passed = false;
    bool skipped = false;     // not applicable on this device (never counted as passed)
    double worst_ratio = 0;   // largest |error| / accepted bound (0 for exact checks that passed)
    double max_abs_error = 0;
    std::string tolerance;    // "exact" or where the bound comes from
    std::string detail;       // one line: counts and the worst element
};

// The GPU the file was measured on, as the CUDA runtime reports it.
struct CalibrationDevice {
    std::string name;                  // e.g. "NVIDIA H200"
    std::string compute_capability;    // "sm_90"
    std::int64_t sm_count = 0;
    std::uint64_t memory_bytes = 0;    // totalGlobalMem
    std::uint64_t l2_bytes = 0;
    std::int64_t sm_clock_khz = 0;
    std::int64_t memory_clock_khz = 0;
    std::int64_t memory_bus_bits = 0;
    bool ecc_enabled = false;
    std::string driver_version;        // "13.0"
    std::string runtime_version;
};

// Per-kernel efficiencies read from the measurements (informational; the planner uses `profile`).
struct KernelFit {
    std::string kernel;
    std::int64_t points = 0;
    double bandwidth_efficiency = 0;   // median over its memory-bound points (0: none)
    double compute_efficiency = 0;     // median achieved / peak over its compute-bound points (0: none)
    double median_abs_relative_error_measured = 0;   // |fitted - measured| / measured, median
    double median_abs_relative_error_realistic = 0;  // |predicted - measured| / measured, median
};

// A whole calibration file.
struct Calibration {
    int format_version = 1;
    std::string created_by;            // "quantplan 0.1.0"
    std::string model;                 // model whose linear shapes were timed
    std::string gpu_profile;           // id of the bundled GPU profile the device matched
    CalibrationDevice device;
    double probe_read_bytes_per_s = 0;
    double probe_copy_bytes_per_s = 0;
    double probe_triad_bytes_per_s = 0;
    std::uint64_t probe_buffer_bytes = 0;
    std::vector<KernelCheck> checks;
    std::vector<KernelMeasurement> measurements;
    std::vector<KernelFit> kernel_fits;
    EfficiencyProfile profile;         // name "measured"
    double median_abs_relative_error_measured = 0;   // over every measurement
    double median_abs_relative_error_realistic = 0;
};

// A point is memory-bound (compute-bound) for the fit when its ideal memory time is at least this
// many times its ideal compute time (or the reverse); points in between inform neither factor.
inline constexpr double kCalibrationBoundMargin = 2.0;

// The largest calibration file load_calibration() reads.
inline constexpr std::uintmax_t kMaxCalibrationFileBytes = 64ull << 20;

// Roofline time of measurement `m` on `gpu` under `eff` (see the header comment).
double predict_kernel_time_s(const KernelMeasurement& m, const GpuProfile& gpu, const EfficiencyProfile& eff);

// Fits the `measured` profile. Factors without evidence keep the `realistic` values. Throws
// Error("calibration") when there is no measurement at all to fit bandwidth from.
EfficiencyProfile fit_measured_profile(const std::vector<KernelMeasurement>& measurements, const GpuProfile& gpu,
                                       double probe_read_bytes_per_s = 0);

// Completes a calibration from its measurements: fits `profile`, fills every predicted and
// fitted time, the per-kernel fits and the median errors.
void finish_calibration(Calibration& calibration, const GpuProfile& gpu);

// One entry of a calibration file's `kernel_fits` (also report.json's `measured.kernel_fits`).
nlohmann::json kernel_fit_json(const KernelFit& fit);

// The calibration file text (JSON, 2-space indent, trailing newline).
std::string calibration_to_json(const Calibration& calibration);

// Parses a calibration file. Throws Error naming `source` and the JSON path of anything missing,
// mistyped or out of range (efficiencies must be in (0, 2]).
Calibration parse_calibration(std::string_view json_text, const std::string& source);

// Reads and parses a calibration file (at most kMaxCalibrationFileBytes). Throws Error("--calibration").
Calibration load_calibration(const std::filesystem::path& path);

// The bundled GPU profile a device is: same compute capability (and SM count where the profile
// gives one), then the most name tokens in common ("L40S", "6000", "PCIe"), then the closest
// memory size. nullopt when no profile has that compute capability.
std::optional<std::string> match_gpu_profile(const CalibrationDevice& device, const std::vector<GpuProfile>& profiles);

// A linear layer shape as engines run it (q/k/v and gate/up fused).
struct LinearShape {
    std::string label;     // "qkv_proj", "o_proj", "gate_up_proj", "down_proj", "expert_gate_up_proj", "expert_down_proj"
    std::int64_t n = 0;    // output channels
    std::int64_t k = 0;    // input channels
};

// The distinct linear shapes of a model's decoder blocks (first label wins on duplicates).
std::vector<LinearShape> model_linear_shapes(const ModelConfig& model);

}  // namespace quantplan
