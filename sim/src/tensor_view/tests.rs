//! Tensor views over strided tiles: f16 and bf16 elements in row-major order, neighbours
//! untouched, a wrong element size named.

use std::sync::Arc;

use super::*;
use crate::memory::DeviceMemory;

/// A 4 x 6 matrix of 2-byte elements at the start of a fresh map.
fn matrix() -> (MemoryMap, u64) {
    let map = MemoryMap::new(Arc::new(DeviceMemory::new(0x4000, 1024).unwrap()), vec![]).unwrap();
    let base = map.alloc(4 * 6 * 2, 64).unwrap();
    (map, base)
}

/// Element `(r, c)` of the test matrix: 10 r + c, exact in f16 and bf16.
fn value(r: u32, c: u32) -> f32 {
    (10 * r + c) as f32
}

fn view(map: &MemoryMap, tile: Tile, access: Access) -> TensorView<'_> {
    let buffer = pto_runtime_core::Buffer::new(0x4000, 1024);
    let tensor = KernelTensor {
        tile,
        buffer,
        access,
        dtype: None,
    };
    TensorView::new(3, tensor, map)
}

#[test]
fn a_strided_f16_block_reads_in_row_major_order_and_writes_only_its_elements() {
    let (map, base) = matrix();
    let all: Vec<f16> = (0..4)
        .flat_map(|r| (0..6).map(move |c| f16::from_f32(value(r, c))))
        .collect();
    map.write_f16s(base, &all).unwrap();
    // The 2 x 3 block from (1, 2), and every other element of row 3 (columns 0, 2, 4).
    let block = Tile::block(base + (6 + 2) * 2, 2, 2, 3, 6);
    let mut evens = Tile::contiguous(base + 3 * 6 * 2, 2, 3);
    evens.strides[0] = 2;
    let got = view(&map, block, Access::InOut).read_f16s().unwrap();
    let want = [12.0, 13.0, 14.0, 22.0, 23.0, 24.0].map(f16::from_f32);
    assert_eq!(got, want);
    assert_eq!(
        view(&map, evens, Access::In).read::<f16>().unwrap(),
        [30.0, 32.0, 34.0].map(f16::from_f32)
    );
    let negated: Vec<f16> = got.iter().map(|v| -*v).collect();
    view(&map, block, Access::InOut)
        .write_f16s(&negated)
        .unwrap();
    view(&map, evens, Access::Out)
        .write(&[f16::ONE; 3])
        .unwrap();
    let mut after = vec![f16::ZERO; 24];
    map.read_f16s(base, &mut after).unwrap();
    for r in 0..4 {
        for c in 0..6 {
            let in_block = (1..3).contains(&r) && (2..5).contains(&c);
            let in_evens = r == 3 && c % 2 == 0;
            let want = match (in_block, in_evens) {
                (true, _) => -value(r, c),
                (_, true) => 1.0,
                _ => value(r, c),
            };
            assert_eq!(after[(r * 6 + c) as usize].to_f32(), want, "({r}, {c})");
        }
    }
}

#[test]
fn a_strided_bf16_column_round_trips() {
    let (map, base) = matrix();
    // Column 5 of the 4 x 6 matrix: 4 elements, 6 apart.
    let mut column = Tile::contiguous(base + 5 * 2, 2, 4);
    column.strides[0] = 6;
    let data = [1.5, -2.0, 1e30, 0.0078125].map(bf16::from_f32);
    view(&map, column, Access::Out).write_bf16s(&data).unwrap();
    assert_eq!(view(&map, column, Access::In).read_bf16s().unwrap(), data);
    let mut row0 = [0u16; 6];
    map.read_elems(base, &mut row0).unwrap();
    assert_eq!(
        row0,
        [0, 0, 0, 0, 0, data[0].to_bits()],
        "only column 5 written"
    );
}

#[test]
fn reading_or_writing_as_another_element_size_names_the_tensor() {
    let (map, base) = matrix();
    let t = view(&map, Tile::contiguous(base, 2, 8), Access::InOut);
    let e = t.read::<f32>().unwrap_err();
    assert_eq!(e.code(), error_code::BAD_TENSOR);
    assert!(
        e.to_string()
            .contains("tensor argument 3: its elements are 2 bytes, read or written as 4-byte"),
        "{e}"
    );
    assert!(
        t.write(&[0u8; 8]).is_err(),
        "1-byte values into 2-byte elements"
    );
    assert!(t.read_f16s().is_ok());
    let f32s = view(&map, Tile::contiguous(base, 4, 2), Access::InOut);
    assert!(f32s.read_bf16s().is_err(), "bf16s from 4-byte elements");
    assert!(
        f32s.write_f16s(&[f16::ONE; 2])
            .unwrap_err()
            .to_string()
            .contains("tensor argument 3"),
    );
}

#[test]
fn a_typed_tensor_refuses_another_type_of_its_size_and_says_where_it_starts() {
    let (map, base) = matrix();
    let buffer = pto_runtime_core::Buffer::new(0x4000, 1024);
    let typed = |dtype, elem| {
        let tile = Tile::contiguous(base + 8, elem, 4);
        let arg = KernelTensor {
            tile,
            buffer,
            access: Access::InOut,
            dtype: Some(dtype),
        };
        TensorView::new(1, arg, &map)
    };
    let bf = typed(Dtype::Bf16, 2);
    assert_eq!(bf.dtype(), Some(Dtype::Bf16));
    assert_eq!(bf.start_offset(), (base + 8 - 0x4000) / 2);
    assert!(bf.read_bf16s().is_ok());
    let e = bf.read_f16s().unwrap_err();
    assert!(
        e.to_string()
            .contains("tensor argument 1: it holds bf16, read or written as f16"),
        "{e}"
    );
    assert!(
        bf.write(&[0u16; 4]).is_err(),
        "integers into a float tensor"
    );
    let ints = typed(Dtype::I32, 4);
    assert!(ints.read_u32s().is_ok(), "integers of one size interchange");
    assert!(ints.read::<i32>().is_ok());
    assert!(ints.read_f32s().is_err(), "floats from an integer tensor");
    assert!(typed(Dtype::F32, 4).read_f32s().is_ok());
}
