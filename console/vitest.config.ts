import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  root: import.meta.dirname,
  define: {
    __APP_VERSION__: JSON.stringify('v0.0.0-test'),
  },
  test: {
    name: 'console',
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}', 'test/**/*.test.{ts,tsx}'],
    exclude: ['test/browser/**', 'node_modules/**', 'dist/**'],
  },
});
