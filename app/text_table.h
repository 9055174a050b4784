#pragma once
// A plain-text table whose columns never run together: every column is as wide as its widest cell
// (header included), and neighbours are separated by at least two spaces, whatever a value's
// width. The headless tables print through it.
#include <ostream>
#include <string>
#include <vector>

namespace quantplan::app {

// `v` with `digits` decimals ("%.*f"), as every table of the command line prints a figure.
std::string fixed(double v, int digits);

class TextTable {
public:
    enum class Align { Left, Right };
    // One column per header; `align` per column (missing ones align right, the first left).
    explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});
    // A row of at most as many cells as headers (missing cells are empty). A row with a `tail` prints
    // that text after its last cell, outside the columns (a note that may be long).
    void add_row(std::vector<std::string> cells, std::string tail = {});
    void print(std::ostream& out) const;

private:
    struct Row {
        std::vector<std::string> cells;
        std::string tail;
    };
    std::vector<std::string> headers_;
    std::vector<Align> align_;
    std::vector<Row> rows_;
};

}  // namespace quantplan::app
