# SPDX-License-Identifier: GPL-2.0
# make demo: what the emulated CET machine gives us, shown to a person.
echo "demo: this guest's CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "demo: shadow-stack flag: $(grep -ow user_shstk /proc/cpuinfo | head -1)"
cet_basics
