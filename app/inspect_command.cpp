#include <ostream>

#include "app/commands.h"

namespace quantplan::app {

int run_inspect(const CliOptions&, std::ostream&, std::ostream& err) {
    err << "quantplan: --inspect is not available in this build yet\n";
    return 2;
}

}  // namespace quantplan::app
