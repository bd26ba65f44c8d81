/* ELF facts of riscv64's psABI that the library reads in loaded objects.  */
#ifndef XP_ARCH_ELF_ARCH_H
#define XP_ARCH_ELF_ARCH_H

#include <elf.h>

/* The relocation of a PLT slot, which the dynamic linker binds.  */
#define XP_ARCH_JUMP_SLOT R_RISCV_JUMP_SLOT

#endif
