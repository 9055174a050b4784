#define BOOST_TEST_MODULE quantplan_kernels
#ifdef QUANTPLAN_BOOST_TEST_HEADER_ONLY  // no Boost.Test library: the framework compiled in (scripts/gpu-deps)
#include <boost/test/included/unit_test.hpp>
#else
#include <boost/test/unit_test.hpp>
#endif
