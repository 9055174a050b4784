#include <ostream>

#include "app/commands.h"

namespace quantplan::app {

int run_report(const CliOptions&, std::ostream&, std::ostream& err) {
    err << "quantplan: --out is not available in this build yet\n";
    return 2;
}

}  // namespace quantplan::app
