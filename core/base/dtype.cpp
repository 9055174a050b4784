#include "core/base/dtype.h"

#include <array>
#include <cctype>

namespace quantplan {
namespace {

constexpr std::array<DTypeTraits, 15> kTraits{{
    {DType::Fp32, "fp32", 32, DTypeKind::Float},
    {DType::Bf16, "bf16", 16, DTypeKind::Float},
    {DType::Fp16, "fp16", 16, DTypeKind::Float},
    {DType::Fp8E4M3, "fp8_e4m3", 8, DTypeKind::Float},
    {DType::Fp8E5M2, "fp8_e5m2", 8, DTypeKind::Float},
    {DType::Fp8E8M0, "fp8_e8m0", 8, DTypeKind::ScaleExponent},
    {DType::Fp4E2M1, "fp4_e2m1", 4, DTypeKind::Float},
    {DType::Int32, "int32", 32, DTypeKind::Integer},
    {DType::Int8, "int8", 8, DTypeKind::Integer},
    {DType::Int7, "int7", 7, DTypeKind::Integer},
    {DType::Int6, "int6", 6, DTypeKind::Integer},
    {DType::Int5, "int5", 5, DTypeKind::Integer},
    {DType::Int4, "int4", 4, DTypeKind::Integer},
    {DType::Int3, "int3", 3, DTypeKind::Integer},
    {DType::Int2, "int2", 2, DTypeKind::Integer},
}};

// The table is indexed by the enum's value: keep both in the same order.
constexpr bool table_matches_enum() {
    for (std::size_t i = 0; i < kTraits.size(); ++i)
        if (static_cast<std::size_t>(kTraits[i].dtype) != i) return false;
    return true;
}
static_assert(table_matches_enum(), "kTraits must list DType values in declaration order");
static_assert(kTraits[static_cast<std::size_t>(DType::Bf16)].bits == 16);
static_assert(kTraits[static_cast<std::size_t>(DType::Fp8E4M3)].bits == 8);
static_assert(kTraits[static_cast<std::size_t>(DType::Fp4E2M1)].bits == 4);
static_assert(kTraits[static_cast<std::size_t>(DType::Int4)].bits == 4);

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

const DTypeTraits& dtype_traits(DType dtype) { return kTraits[static_cast<std::size_t>(dtype)]; }

std::optional<DType> parse_dtype(std::string_view name) {
    const std::string n = lower(name);
    for (const auto& t : kTraits)
        if (n == t.name) return t.dtype;
    // Aliases used by engines and configs.
    if (n == "bfloat16") return DType::Bf16;
    if (n == "float16" || n == "half") return DType::Fp16;
    if (n == "float32" || n == "float") return DType::Fp32;
    if (n == "fp8" || n == "e4m3" || n == "fp8_e4m3fn" || n == "float8_e4m3fn") return DType::Fp8E4M3;
    if (n == "e5m2" || n == "float8_e5m2") return DType::Fp8E5M2;
    if (n == "e8m0" || n == "ue8m0") return DType::Fp8E8M0;
    if (n == "fp4" || n == "e2m1") return DType::Fp4E2M1;
    return std::nullopt;
}

std::optional<DType> int_dtype_with_bits(int bits) {
    switch (bits) {
        case 2: return DType::Int2;
        case 3: return DType::Int3;
        case 4: return DType::Int4;
        case 5: return DType::Int5;
        case 6: return DType::Int6;
        case 7: return DType::Int7;
        case 8: return DType::Int8;
        case 32: return DType::Int32;
        default: return std::nullopt;
    }
}

const DTypeTraits* all_dtypes(std::size_t* count) {
    *count = kTraits.size();
    return kTraits.data();
}

}  // namespace quantplan
