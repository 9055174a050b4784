#pragma once
// Matching module names against the patterns quantization configs write: Python regular
// expressions (compressed-tensors "re:" targets, GPTQModel "dynamic" keys) and shell globs
// (ModelOpt exclude_modules, mxfp4 modules_to_not_convert).
//
// The patterns come from downloaded files, so the regex engine is a Thompson NFA simulated in
// lock-step (Pike VM without captures): time is O(pattern x name) whatever the pattern, the stack
// never grows with the input, and programs are bounded in size. It implements the subset of
// Python's `re` that configs use: literals, ., classes [..] with ranges and negation, \d \w \s and
// their negations, escapes, groups ( ) (?: ) (?P<name> ), alternation |, quantifiers * + ? {m}
// {m,} {m,n} (lazy and possessive suffixes accepted, meaning the same for a yes/no match), and
// the anchors ^ $ \A \Z. Back-references, look-around and inline flags are refused with an Error.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace quantplan {

// Longest pattern accepted, characters (published ignore patterns are well under 200).
inline constexpr std::size_t kMaxPatternChars = 1024;

// Most NFA instructions a compiled pattern may have (counted repetition expands copies).
inline constexpr std::size_t kMaxPatternInstructions = 20000;

// A compiled regular expression.
class NamePattern {
public:
    // Compiles `pattern`; throws Error(field, ...) naming the pattern when it is not in the subset
    // above, is longer than kMaxPatternChars or compiles to more than kMaxPatternInstructions.
    static NamePattern compile(std::string_view pattern, const std::string& field);

    // Python re.match: true when a prefix of `text` matches.
    bool match_prefix(std::string_view text) const;

    // Python re.fullmatch: true when the whole of `text` matches.
    bool match_full(std::string_view text) const;

    // The pattern as written.
    const std::string& text() const { return text_; }

    // One NFA instruction (public so that the compiler in the .cpp can build programs).
    struct Instruction {
        enum class Op : std::uint8_t { Byte, Split, Jump, Match, AssertBegin, AssertEnd };
        Op op = Op::Match;
        std::uint32_t x = 0;   // Split: first branch; Jump: target
        std::uint32_t y = 0;   // Split: second branch
        std::uint32_t set = 0; // Byte: index into the byte-set table
    };

private:
    bool run(std::string_view text, bool need_end) const;

    std::string text_;
    std::shared_ptr<const std::vector<Instruction>> program_;
    std::shared_ptr<const std::vector<std::array<std::uint64_t, 4>>> sets_;
};

// Shell-style pattern (Python fnmatch.fnmatchcase): * any run of characters (dots included),
// ? one character, [seq] / [!seq] one character in / not in seq. Linear-time in practice, O(p x t)
// at worst.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace quantplan
