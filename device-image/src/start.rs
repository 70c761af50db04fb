//! The image's entry: point the stack at `__stack_top`, clear `.bss`, run
//! `pto_aicpu_main`, and exit with its result. Symbols come from `linker/aicpu.ld`.
#![allow(unsafe_code)]

// SAFETY: `_start` runs first and alone, with nothing on the stack; the linker script places
// `__bss_start..__bss_end` (16-byte aligned) and `__stack_top` inside the loaded image, so
// the stores and the stack stay in memory the image owns.
core::arch::global_asm!(
    ".section .text._start, \"ax\"",
    ".global _start",
    ".type _start, %function",
    "_start:",
    "    ldr x0, =__stack_top",
    "    mov sp, x0",
    "    ldr x0, =__bss_start",
    "    ldr x1, =__bss_end",
    "1:  cmp x0, x1",
    "    b.hs 2f",
    "    stp xzr, xzr, [x0], #16",
    "    b 1b",
    "2:  bl pto_aicpu_main",
    "    bl pto_aicpu_exit",
    "3:  wfe",
    "    b 3b",
);
