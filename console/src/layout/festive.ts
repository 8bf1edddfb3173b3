/** The festive menu item shows on 1 January and from 9 to 24 February (local time). */
export function isFestiveDay(date: Date): boolean {
  const month = date.getMonth();
  const day = date.getDate();
  return (month === 0 && day === 1) || (month === 1 && day >= 9 && day <= 24);
}
