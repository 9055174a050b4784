#pragma once
// Number formats a tensor can be stored in: the storage axis of the design space (seed 000 §4.1).
// Each format has one row in a traits table; its bits per element are asserted at compile time.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quantplan {

// A storage or scale number format. Integer formats are two's-complement (signed) unless their
// name says uint; the signedness of a quantized integer is a property of the symmetric/asymmetric
// choice, not of the storage width, so intN here means "N bits per element".
enum class DType : std::uint8_t {
    Fp32,     // IEEE binary32
    Bf16,     // bfloat16: 8 exponent, 7 mantissa bits
    Fp16,     // IEEE binary16
    Fp8E4M3,  // OCP FP8 E4M3 (fn: no infinities, max 448)
    Fp8E5M2,  // OCP FP8 E5M2 (max 57344)
    Fp8E8M0,  // OCP E8M0 power-of-two scale (MXFP block scale)
    Fp4E2M1,  // OCP FP4 E2M1 (max 6)
    Int32,    // 32-bit integer (packing words, g_idx)
    Int8,
    Int7,
    Int6,
    Int5,
    Int4,
    Int3,
    Int2,
};

// What kind of number a format holds.
enum class DTypeKind : std::uint8_t { Float, Integer, ScaleExponent };

// One row of the traits table.
struct DTypeTraits {
    DType dtype;
    std::string_view name;  // canonical lower-case name, e.g. "fp8_e4m3", "int4"
    int bits;               // bits per element as stored (before any packing)
    DTypeKind kind;
};

// The traits of `dtype`.
const DTypeTraits& dtype_traits(DType dtype);

// Bits per element of `dtype`.
inline int dtype_bits(DType dtype) { return dtype_traits(dtype).bits; }

// Canonical name of `dtype`.
inline std::string_view dtype_name(DType dtype) { return dtype_traits(dtype).name; }

// True for the integer formats.
inline bool dtype_is_integer(DType dtype) { return dtype_traits(dtype).kind == DTypeKind::Integer; }

// The format named `name` ("bf16", "fp8", "fp8_e4m3", "e4m3", "int4", ...), or nullopt.
std::optional<DType> parse_dtype(std::string_view name);

// The integer format with `bits` bits (2..8, or 32), or nullopt.
std::optional<DType> int_dtype_with_bits(int bits);

// Every format, in traits-table order (for data-driven tests and help texts).
const DTypeTraits* all_dtypes(std::size_t* count);

}  // namespace quantplan
