/** The example's order book: what load-order "loads". A real worker would query a database. */
export type OrderLine = {
  sku: string;
  quantity: number;
  unitPrice: number;
};

export type Order = {
  orderId: string;
  customer: string;
  card: string;
  address: string;
  lines: OrderLine[];
};

/** A card number the example's payment provider always declines. */
export const DECLINED_CARD = '4000-0000-0000-0002';

export const ORDERS: Readonly<Record<string, Order>> = {
  'o-1001': {
    orderId: 'o-1001',
    customer: 'Ada',
    card: '4242-4242-4242-4242',
    address: '12 Analytical Row, London',
    lines: [
      { sku: 'notebook', quantity: 3, unitPrice: 4.5 },
      { sku: 'pen', quantity: 10, unitPrice: 1.2 },
    ],
  },
  'o-1002': {
    orderId: 'o-1002',
    customer: 'Grace',
    card: '4242-4242-4242-4242',
    address: '1 Harbor Way, Arlington',
    lines: [
      { sku: 'laptop', quantity: 1, unitPrice: 1200 },
      { sku: 'dock', quantity: 1, unitPrice: 180 },
    ],
  },
  'o-1003': {
    orderId: 'o-1003',
    customer: 'Alan',
    card: DECLINED_CARD,
    address: '2 Bletchley Park, Milton Keynes',
    lines: [{ sku: 'chessboard', quantity: 1, unitPrice: 35 }],
  },
};
