#include "timer/zlbtimer.h"
