#include "core/checkpoint/name_pattern.h"

#include <algorithm>
#include <cctype>

#include "core/base/error.h"

namespace quantplan {
namespace {

using ByteSet = std::array<std::uint64_t, 4>;
using Instruction = NamePattern::Instruction;
using Op = Instruction::Op;

// Deepest group nesting the parser follows (its recursion is bounded by this).
constexpr int kMaxGroupDepth = 64;
// Largest {m,n} count accepted.
constexpr int kMaxRepeatCount = 1000;

void add(ByteSet& s, unsigned char c) { s[c >> 6] |= std::uint64_t{1} << (c & 63); }
bool has(const ByteSet& s, unsigned char c) { return (s[c >> 6] >> (c & 63)) & 1; }
void add_range(ByteSet& s, unsigned char lo, unsigned char hi) {
    for (unsigned c = lo; c <= hi; ++c) add(s, static_cast<unsigned char>(c));
}
ByteSet invert(const ByteSet& s) { return {~s[0], ~s[1], ~s[2], ~s[3]}; }
ByteSet merge(const ByteSet& a, const ByteSet& b) { return {a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]}; }

ByteSet digit_set() {
    ByteSet s{};
    add_range(s, '0', '9');
    return s;
}
ByteSet word_set() {
    ByteSet s = digit_set();
    add_range(s, 'a', 'z');
    add_range(s, 'A', 'Z');
    add(s, '_');
    add_range(s, 0x80, 0xFF);  // bytes of non-ASCII letters: Python's str patterns are Unicode-aware
    return s;
}
ByteSet space_set() {
    ByteSet s{};
    for (char c : std::string_view(" \t\n\r\f\v")) add(s, static_cast<unsigned char>(c));
    return s;
}

// Abstract syntax of a pattern.
struct Node {
    enum class Kind : std::uint8_t { Empty, Set, Concat, Alt, Repeat, Begin, End };
    Kind kind = Kind::Empty;
    std::uint32_t set = 0;
    std::vector<std::size_t> kids;
    int min = 0;
    int max = 0;  // -1: unbounded
};

class Parser {
public:
    Parser(std::string_view p, const std::string& field) : p_(p), field_(field) {}

    std::size_t parse() {
        const std::size_t root = alternation(0);
        if (pos_ != p_.size()) fail("unbalanced ')'");
        return root;
    }

    std::vector<Node> nodes;
    std::vector<ByteSet> sets;

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw Error(field_, "pattern '" + std::string(p_) + "': " + why + " at position " + std::to_string(pos_));
    }
    bool at_end() const { return pos_ >= p_.size(); }
    char peek() const { return p_[pos_]; }
    std::size_t node(Node n) {
        nodes.push_back(std::move(n));
        return nodes.size() - 1;
    }
    std::size_t set_node(const ByteSet& s) {
        sets.push_back(s);
        Node n;
        n.kind = Node::Kind::Set;
        n.set = static_cast<std::uint32_t>(sets.size() - 1);
        return node(std::move(n));
    }

    std::size_t alternation(int depth) {
        if (depth > kMaxGroupDepth) fail("groups nest too deep");
        Node alt;
        alt.kind = Node::Kind::Alt;
        alt.kids.push_back(concatenation(depth));
        while (!at_end() && peek() == '|') {
            ++pos_;
            alt.kids.push_back(concatenation(depth));
        }
        return alt.kids.size() == 1 ? alt.kids[0] : node(std::move(alt));
    }

    std::size_t concatenation(int depth) {
        Node cat;
        cat.kind = Node::Kind::Concat;
        while (!at_end() && peek() != '|' && peek() != ')') cat.kids.push_back(repetition(depth));
        return node(std::move(cat));
    }

    // Reads digits; returns -1 when there are none.
    int number() {
        int v = -1;
        while (!at_end() && peek() >= '0' && peek() <= '9') {
            v = (v < 0 ? 0 : v) * 10 + (peek() - '0');
            if (v > kMaxRepeatCount) fail("repeat count above " + std::to_string(kMaxRepeatCount));
            ++pos_;
        }
        return v;
    }

    // Parses {m}, {m,}, {,n}, {m,n} at pos_ (which is at '{'); false (pos_ unchanged) when the
    // brace is a literal, as in Python.
    bool braces(int& lo, int& hi) {
        const std::size_t start = pos_;
        ++pos_;
        const int a = number();
        int b = a;
        if (!at_end() && peek() == ',') {
            ++pos_;
            b = number();
        }
        if (at_end() || peek() != '}' || (a < 0 && p_[pos_ - 1] == '{')) {
            pos_ = start;
            return false;
        }
        ++pos_;
        lo = a < 0 ? 0 : a;
        hi = b;  // -1: unbounded
        if (hi >= 0 && hi < lo) fail("min repeat greater than max repeat");
        return true;
    }

    std::size_t repetition(int depth) {
        std::size_t atom_node = atom(depth);
        bool repeated = false;
        while (!at_end()) {
            int lo = 0, hi = 0;
            const char c = peek();
            if (c == '*') { lo = 0; hi = -1; ++pos_; }
            else if (c == '+') { lo = 1; hi = -1; ++pos_; }
            else if (c == '?') { lo = 0; hi = 1; ++pos_; }
            else if (c == '{') {
                if (!braces(lo, hi)) break;
            } else break;
            if (repeated) fail("multiple repeat");
            repeated = true;
            const Node::Kind k = nodes[atom_node].kind;
            if (k == Node::Kind::Begin || k == Node::Kind::End) fail("nothing to repeat");
            // Lazy (x*?) and possessive (x*+) forms match the same set of names.
            if (!at_end() && (peek() == '?' || peek() == '+')) ++pos_;
            Node r;
            r.kind = Node::Kind::Repeat;
            r.kids.push_back(atom_node);
            r.min = lo;
            r.max = hi;
            atom_node = node(std::move(r));
        }
        return atom_node;
    }

    std::size_t atom(int depth) {
        const char c = peek();
        switch (c) {
            case '(': {
                ++pos_;
                if (!at_end() && peek() == '?') {
                    if (p_.substr(pos_, 2) == "?:") pos_ += 2;
                    else if (p_.substr(pos_, 3) == "?P<") {
                        const std::size_t close = p_.find('>', pos_);
                        if (close == std::string_view::npos) fail("unterminated group name");
                        pos_ = close + 1;
                    } else fail("look-around, inline flags and conditionals are not supported");
                }
                const std::size_t inner = alternation(depth + 1);
                if (at_end() || peek() != ')') fail("missing ')'");
                ++pos_;
                return inner;
            }
            case ')': fail("unbalanced ')'");
            case '*': case '+': case '?': fail("nothing to repeat");
            case '^': { ++pos_; Node n; n.kind = Node::Kind::Begin; return node(std::move(n)); }
            case '$': { ++pos_; Node n; n.kind = Node::Kind::End; return node(std::move(n)); }
            case '.': {
                ++pos_;
                ByteSet s{};
                s = invert(s);
                s[0] &= ~(std::uint64_t{1} << '\n');
                return set_node(s);
            }
            case '[': return set_node(bracket());
            case '\\': {
                ++pos_;
                if (at_end()) fail("pattern ends with '\\'");
                const char e = peek();
                if (e == 'A') { ++pos_; Node n; n.kind = Node::Kind::Begin; return node(std::move(n)); }
                if (e == 'Z') { ++pos_; Node n; n.kind = Node::Kind::End; return node(std::move(n)); }
                return set_node(escape_set());
            }
            default: {
                ++pos_;
                ByteSet s{};
                add(s, static_cast<unsigned char>(c));
                return set_node(s);
            }
        }
    }

    // The set of an escape at pos_ (just after the backslash); advances past it.
    ByteSet escape_set() {
        const char e = peek();
        ++pos_;
        ByteSet s{};
        switch (e) {
            case 'd': return digit_set();
            case 'D': return invert(digit_set());
            case 'w': return word_set();
            case 'W': return invert(word_set());
            case 's': return space_set();
            case 'S': return invert(space_set());
            case 'n': add(s, '\n'); return s;
            case 't': add(s, '\t'); return s;
            case 'r': add(s, '\r'); return s;
            case 'f': add(s, '\f'); return s;
            case 'v': add(s, '\v'); return s;
            case 'x': {
                if (pos_ + 2 > p_.size()) fail("incomplete \\x escape");
                const std::string hex(p_.substr(pos_, 2));
                if (!std::isxdigit(static_cast<unsigned char>(hex[0])) || !std::isxdigit(static_cast<unsigned char>(hex[1]))) fail("bad \\x escape");
                pos_ += 2;
                add(s, static_cast<unsigned char>(std::stoi(hex, nullptr, 16)));
                return s;
            }
            default:
                if (std::isalnum(static_cast<unsigned char>(e))) {
                    --pos_;
                    fail(std::string("escape \\") + e + " (back-references, word boundaries) is not supported");
                }
                add(s, static_cast<unsigned char>(e));
                return s;
        }
    }

    ByteSet bracket() {
        ++pos_;  // '['
        bool negate = false;
        if (!at_end() && peek() == '^') {
            negate = true;
            ++pos_;
        }
        ByteSet s{};
        bool first = true;
        while (true) {
            if (at_end()) fail("unterminated character set");
            char c = peek();
            if (c == ']' && !first) {
                ++pos_;
                break;
            }
            first = false;
            ByteSet item{};
            unsigned char lo = 0;
            bool single = true;
            if (c == '\\') {
                ++pos_;
                if (at_end()) fail("unterminated character set");
                const char e = peek();
                item = escape_set();
                single = !(e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S');
                if (single) {
                    for (unsigned v = 0; v < 256; ++v)
                        if (has(item, static_cast<unsigned char>(v))) lo = static_cast<unsigned char>(v);
                }
            } else {
                lo = static_cast<unsigned char>(c);
                ++pos_;
                add(item, lo);
            }
            if (single && pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
                ++pos_;
                unsigned char hi = static_cast<unsigned char>(peek());
                if (hi == '\\') {
                    ++pos_;
                    if (at_end()) fail("unterminated character set");
                    const ByteSet h = escape_set();
                    hi = 0;
                    for (unsigned v = 0; v < 256; ++v)
                        if (has(h, static_cast<unsigned char>(v))) hi = static_cast<unsigned char>(v);
                } else {
                    ++pos_;
                }
                if (hi < lo) fail("bad character range");
                add_range(item, lo, hi);
            }
            s = merge(s, item);
        }
        return negate ? invert(s) : s;
    }

    std::string_view p_;
    const std::string& field_;
    std::size_t pos_ = 0;
};

class Compiler {
public:
    Compiler(const std::vector<Node>& nodes, const std::string& field, const std::string& text) : nodes_(nodes), field_(field), text_(text) {}

    std::vector<Instruction> program;

    void emit(std::size_t n, int depth) {
        if (depth > 4 * kMaxGroupDepth) fail();
        const Node& node = nodes_[n];
        switch (node.kind) {
            case Node::Kind::Empty: break;
            case Node::Kind::Set: push({Op::Byte, 0, 0, node.set}); break;
            case Node::Kind::Begin: push({Op::AssertBegin, 0, 0, 0}); break;
            case Node::Kind::End: push({Op::AssertEnd, 0, 0, 0}); break;
            case Node::Kind::Concat:
                for (std::size_t k : node.kids) emit(k, depth + 1);
                break;
            case Node::Kind::Alt: {
                std::vector<std::size_t> jumps;
                for (std::size_t i = 0; i < node.kids.size(); ++i) {
                    if (i + 1 < node.kids.size()) {
                        const std::size_t split = push({Op::Split, 0, 0, 0});
                        program[split].x = static_cast<std::uint32_t>(program.size());
                        emit(node.kids[i], depth + 1);
                        jumps.push_back(push({Op::Jump, 0, 0, 0}));
                        program[split].y = static_cast<std::uint32_t>(program.size());
                    } else {
                        emit(node.kids[i], depth + 1);
                    }
                }
                for (std::size_t j : jumps) program[j].x = static_cast<std::uint32_t>(program.size());
                break;
            }
            case Node::Kind::Repeat: {
                const std::size_t body = node.kids[0];
                for (int i = 0; i < node.min; ++i) emit(body, depth + 1);
                if (node.max < 0) {
                    const std::size_t split = push({Op::Split, 0, 0, 0});
                    program[split].x = static_cast<std::uint32_t>(program.size());
                    emit(body, depth + 1);
                    push({Op::Jump, static_cast<std::uint32_t>(split), 0, 0});
                    program[split].y = static_cast<std::uint32_t>(program.size());
                } else {
                    std::vector<std::size_t> splits;
                    for (int i = node.min; i < node.max; ++i) {
                        splits.push_back(push({Op::Split, 0, 0, 0}));
                        program[splits.back()].x = static_cast<std::uint32_t>(program.size());
                        emit(body, depth + 1);
                    }
                    for (std::size_t s : splits) program[s].y = static_cast<std::uint32_t>(program.size());
                }
                break;
            }
        }
    }

private:
    [[noreturn]] void fail() const {
        throw Error(field_, "pattern '" + text_ + "' is too large (more than " + std::to_string(kMaxPatternInstructions) + " NFA instructions)");
    }
    std::size_t push(Instruction i) {
        if (program.size() >= kMaxPatternInstructions) fail();
        program.push_back(i);
        return program.size() - 1;
    }

    const std::vector<Node>& nodes_;
    const std::string& field_;
    const std::string& text_;
};

// A set of program counters with O(1) insert, membership and clear (Briggs-Torczon sparse set).
class SparseSet {
public:
    explicit SparseSet(std::size_t n) : dense_(n), sparse_(n) {}
    bool contains(std::uint32_t v) const { return sparse_[v] < size_ && dense_[sparse_[v]] == v; }
    void insert(std::uint32_t v) {
        sparse_[v] = static_cast<std::uint32_t>(size_);
        dense_[size_++] = v;
    }
    void clear() { size_ = 0; }
    std::size_t size() const { return size_; }
    std::uint32_t operator[](std::size_t i) const { return dense_[i]; }

private:
    std::vector<std::uint32_t> dense_;
    std::vector<std::uint32_t> sparse_;
    std::size_t size_ = 0;
};

}  // namespace

NamePattern NamePattern::compile(std::string_view pattern, const std::string& field) {
    if (pattern.size() > kMaxPatternChars)
        throw Error(field, "pattern of " + std::to_string(pattern.size()) + " characters is longer than the " + std::to_string(kMaxPatternChars) + " allowed");
    Parser parser(pattern, field);
    const std::size_t root = parser.parse();
    NamePattern out;
    out.text_ = std::string(pattern);
    Compiler compiler(parser.nodes, field, out.text_);
    compiler.emit(root, 0);
    compiler.program.push_back({Op::Match, 0, 0, 0});
    out.program_ = std::make_shared<const std::vector<Instruction>>(std::move(compiler.program));
    out.sets_ = std::make_shared<const std::vector<ByteSet>>(std::move(parser.sets));
    return out;
}

bool NamePattern::run(std::string_view text, bool need_end) const {
    const std::vector<Instruction>& prog = *program_;
    const std::vector<ByteSet>& sets = *sets_;
    SparseSet current(prog.size()), next(prog.size());
    std::vector<std::uint32_t> stack;
    bool matched = false;
    // Follows jumps, splits and assertions from `pc` at text position `pos`, adding the byte
    // instructions reached to `list`.
    const auto add_thread = [&](SparseSet& list, std::uint32_t start, std::size_t pos) {
        stack.push_back(start);
        while (!stack.empty()) {
            const std::uint32_t pc = stack.back();
            stack.pop_back();
            if (list.contains(pc)) continue;
            list.insert(pc);
            const Instruction& in = prog[pc];
            switch (in.op) {
                case Op::Jump: stack.push_back(in.x); break;
                case Op::Split:
                    stack.push_back(in.y);
                    stack.push_back(in.x);
                    break;
                case Op::AssertBegin:
                    if (pos == 0) stack.push_back(pc + 1);
                    break;
                case Op::AssertEnd:
                    if (pos == text.size()) stack.push_back(pc + 1);
                    break;
                case Op::Match:
                    if (!need_end || pos == text.size()) matched = true;
                    break;
                case Op::Byte: break;
            }
        }
    };
    add_thread(current, 0, 0);
    for (std::size_t pos = 0; pos < text.size() && !matched && current.size() > 0; ++pos) {
        const auto c = static_cast<unsigned char>(text[pos]);
        next.clear();
        for (std::size_t i = 0; i < current.size(); ++i) {
            const Instruction& in = prog[current[i]];
            if (in.op == Op::Byte && has(sets[in.set], c)) add_thread(next, current[i] + 1, pos + 1);
        }
        std::swap(current, next);
    }
    return matched;
}

bool NamePattern::match_prefix(std::string_view text) const { return run(text, false); }

bool NamePattern::match_full(std::string_view text) const { return run(text, true); }

namespace {

// Matches one pattern element of a glob at `p` against `c`; sets `len` to the element's length.
bool glob_element(std::string_view pat, std::size_t p, unsigned char c, std::size_t& len) {
    if (pat[p] == '?') {
        len = 1;
        return true;
    }
    if (pat[p] == '[') {
        std::size_t i = p + 1;
        bool negate = false;
        if (i < pat.size() && pat[i] == '!') {
            negate = true;
            ++i;
        }
        const std::size_t first = i;
        if (i < pat.size() && pat[i] == ']') ++i;
        const std::size_t close = pat.find(']', i);
        if (close != std::string_view::npos) {
            bool in = false;
            for (std::size_t k = first; k < close; ++k) {
                if (k + 2 < close && pat[k + 1] == '-') {
                    in = in || (c >= static_cast<unsigned char>(pat[k]) && c <= static_cast<unsigned char>(pat[k + 2]));
                    k += 2;
                } else {
                    in = in || c == static_cast<unsigned char>(pat[k]);
                }
            }
            len = close - p + 1;
            return in != negate;
        }
        // No closing bracket: '[' is a literal, as in fnmatch.
    }
    len = 1;
    return static_cast<unsigned char>(pat[p]) == c;
}

}  // namespace

bool glob_match(std::string_view pat, std::string_view text) {
    std::size_t p = 0, t = 0;
    std::size_t star_p = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        std::size_t len = 0;
        if (p < pat.size() && pat[p] == '*') {
            star_p = p++;
            star_t = t;
            continue;
        }
        if (p < pat.size() && glob_element(pat, p, static_cast<unsigned char>(text[t]), len)) {
            p += len;
            ++t;
            continue;
        }
        if (star_p == std::string_view::npos) return false;
        p = star_p + 1;
        t = ++star_t;
    }
    while (p < pat.size() && pat[p] == '*') ++p;
    return p == pat.size();
}

}  // namespace quantplan
