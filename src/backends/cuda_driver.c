/* filled by the timer work */
#include "backends/cuda_driver.h"
