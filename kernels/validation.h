#pragma once
// The GPU half of `quantplan --validate` and of the GPU tests: identify the device, check every
// kernel against its host reference, and time every kernel (CUDA events, warm-up, L2 flushed
// before each repeat, median of repeats). Results are plain structs; the app turns them into a
// calibration file with core/hardware/calibration.h (kernels does not depend on core's planner).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kernels/kv_cache_reference.h"
#include "kernels/numeric.h"
#include "kernels/w4a16_gemm.h"

namespace quantplan::kernels {

// The device as the CUDA runtime reports it.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    int compute_capability = 0;            // major * 10 + minor
    std::int64_t sm_count = 0;
    std::uint64_t memory_bytes = 0;        // totalGlobalMem
    std::uint64_t l2_bytes = 0;
    std::int64_t sm_clock_khz = 0;
    std::int64_t memory_clock_khz = 0;
    std::int64_t memory_bus_bits = 0;
    bool ecc_enabled = false;
    std::string driver_version;            // "13.0"
    std::string runtime_version;
};

// Looks for device 0. Returns false with a one-line reason (no driver, no device, CUDA error)
// instead of throwing.
bool find_device(DeviceInfo* info, std::string* why_not);

// One kernel output checked against its reference.
struct ValidationCheck {
    std::string kernel;
    std::string shape;
    bool passed = false;
    bool skipped = false;      // not applicable on this device (detail says why); never counts as passed
    double worst_ratio = 0;    // largest |error| / bound
    double max_abs_error = 0;
    std::string tolerance;     // "exact" or the bound's source
    std::string detail;
};

// One timed measurement (median over repeats).
struct ValidationTiming {
    std::string kernel;        // a core/hardware/calibration.h kernel name
    std::string shape;
    std::int64_t batch = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t context_tokens = 0;
    std::uint64_t bytes = 0;   // roofline byte count (see docs/kernels.md)
    double flop = 0;
    double time_s = 0;
};

// A linear layer shape to time.
struct GemmShapeSpec {
    std::string label;
    std::int64_t n = 0;
    std::int64_t k = 0;
};

// What --validate measures.
struct ValidationConfig {
    std::vector<GemmShapeSpec> shapes;                 // model projections and the 8192 x 8192 anchor
    std::vector<std::int64_t> batches;                 // GEMM rows M (1 .. 4096)
    std::int64_t group_size = 128;
    Half16 act_type = Half16::Bf16;
    std::int64_t q_heads = 0;                          // attention; 0 skips it
    std::int64_t kv_heads = 0;
    std::int64_t head_dim = 0;
    std::vector<std::int64_t> attention_batches;
    std::vector<std::int64_t> contexts;
    int warmup = 3;
    int repeats = 15;
    double time_budget_s = 300;                        // timing stops (with a note) past this
};

// The probe's figures.
struct ProbeResult {
    double read_bytes_per_s = 0;
    double copy_bytes_per_s = 0;
    double triad_bytes_per_s = 0;
    std::uint64_t buffer_bytes = 0;
};

// Everything a run found.
struct ValidationReport {
    DeviceInfo device;
    ProbeResult probe;
    std::vector<ValidationCheck> checks;
    std::vector<ValidationTiming> timings;
    std::vector<std::string> notes;  // skipped measurements, budget stops
};

// ---- Individual checks (each builds seeded data, runs the kernel, compares; never throws) ----

// The hardware conversions against the shared helpers (selftest.h).
ValidationCheck check_numeric_helpers();
// Fused W4A16 on a random weight in the kernels' layout.
ValidationCheck check_w4a16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act, Half16 scale_type, bool zeros,
                            W4Path path, std::uint64_t seed);
// AutoAWQ (awq true) or GPTQ tensors repacked at load, then the fused GEMM; the reference is the
// checkpoint's own dequantized weight. act_order (GPTQ) shuffles g_idx and permutes activations.
ValidationCheck check_w4a16_checkpoint(bool awq, bool act_order, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act);
// The dequantize kernel, bit-exact.
ValidationCheck check_w4a16_dequantize(std::int64_t n, std::int64_t k, std::int64_t group, bool zeros, Half16 out_type);
// Dequantize + cuBLASLt.
ValidationCheck check_w4a16_generic(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t group, Half16 act);
// cuBLASLt bf16 GEMM.
ValidationCheck check_gemm_bf16(std::int64_t m, std::int64_t n, std::int64_t k);
// Per-row quantization, bit-exact.
ValidationCheck check_quantize_rows(bool fp8, std::int64_t rows, std::int64_t cols, Half16 type);
// W8A8 INT8 (quantize, cuBLASLt INT8, epilogue), bit-exact.
ValidationCheck check_w8a8_int8(std::int64_t m, std::int64_t n, std::int64_t k);
// W8A8 FP8; skipped below sm_89.
ValidationCheck check_w8a8_fp8(std::int64_t m, std::int64_t n, std::int64_t k);
// Quantize-on-write, bit-exact.
ValidationCheck check_kv_write(KvCacheType type, std::int64_t batch, std::int64_t kv_heads, std::int64_t head_dim);
// Decode attention over a cache filled through kv_cache_write.
ValidationCheck check_decode_attention(KvCacheType type, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim,
                                       const std::vector<std::int32_t>& seq_lens, std::uint64_t seed);
// Probe copy and triad produce the right values.
ValidationCheck check_probe();

// Every check above over its edge cases (sizes 1, alignment edges, non-multiples, split paths).
std::vector<ValidationCheck> run_correctness_checks(std::ostream& log);

// ---- Timing ----

// The bandwidth probe over buffers of at least 8 x L2 (and 1 GiB when memory allows).
ProbeResult run_bandwidth_probe(const DeviceInfo& device, int repeats, std::vector<ValidationTiming>* timings, std::ostream& log);

// Times every kernel over the configuration's shapes and batches (and attention cases).
std::vector<ValidationTiming> run_timings(const ValidationConfig& config, const DeviceInfo& device, std::ostream& log,
                                          std::vector<std::string>* notes);

// Checks, probe and timings in that order. Throws KernelError only when the device itself fails.
ValidationReport run_validation(const ValidationConfig& config, const DeviceInfo& device, std::ostream& log);

}  // namespace quantplan::kernels
