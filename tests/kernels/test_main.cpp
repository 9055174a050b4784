#define BOOST_TEST_MODULE quantplan_kernels
#include <boost/test/unit_test.hpp>
